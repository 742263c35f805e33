#!/usr/bin/env bash
# Runs memwall's scale benchmarks (issue targets in brackets). Usage: bench/run_benchmarks.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
row=scenarios/worked-example/4-ib-64.yaml
echo "[target <= 10 s, <= 1 GiB]  64-GPU IB row, 8 micro-batches, N = 1,024:"
"$build/bench/bench_scale" "$row" 1024 8
echo "[target <= 60 s, <= 4 GiB]  64-GPU IB row, 1 micro-batch, N = 16,384:"
"$build/bench/bench_scale" "$row" 16384 1
echo "[target <= 60 s with -j 2]  Table 6 sweep (8 points, N up to 1,024):"
out=$(mktemp -d)
start=$(date +%s%N)
"$build/memwall" sweep scenarios/batch-squeeze.yaml -j 2 --out "$out/squeeze.csv" >/dev/null 2>&1
echo "wall=$(( ($(date +%s%N) - start) / 1000000 )) ms"
rm -rf "$out"
echo "[target <= 30 s]  4,096-GPU fat-tree cluster, hierarchical all-reduce of a 7B model + 1 micro-batch:"
"$build/bench/bench_scale" bench/cluster-4096.yaml 4096 1
echo "[target <= 10 s]  GPT-3 175B on 1,024 A100 (TP 8, PP 8, DP 16, 96 micro-batches per pipeline):"
"$build/bench/bench_scale" bench/model-parallel/gpt3-175b-1024-a100.yaml 0 0
echo "[target <= 60 s, <= 4 GiB]  GPT 1T on 3,072 A100 (TP 8, PP 64, DP 6, 512 micro-batches), Megatron-LM's Table 1 row:"
"$build/bench/bench_scale" scenarios/validation-megatron/10-gpt-1008p0b-3072gpu.yaml 0 0
echo "[target <= 60 s, <= 8 GiB]  Llama-3.1 405B on 16,384 H100 (TP 8, PP 16, DP 128, seq 8192, global batch 2048):"
"$build/bench/bench_scale" bench/model-parallel/llama31-405b-16384-h100.yaml 0 0
echo "[target <= 60 s, <= 4 GiB]  GPT-3 175B on 12,288 A100 (TP 8, PP 8, VP 6, DP 192, global batch 6,144), issue 28:"
"$build/bench/bench_scale" bench/model-parallel/gpt3-175b-12288-a100.yaml 0 0
echo "[target <= 30 s]  Llama-3.1 405B on 16,384 H100 (TP 8, PP 16, FSDP 128, global batch 2,048), issue 28:"
"$build/bench/bench_scale" bench/model-parallel/llama31-405b-16384-h100-fsdp.yaml 0 0
echo "[target <= 10 min with -j 2]  memwall plan: Llama-3.1 405B on 16,384 H100 over TP x PP x CP x micro-batch, issue 28:"
out=$(mktemp -d)
/usr/bin/time -f "wall=%e s, peak RSS of the planner=%M KB" "$build/memwall" plan bench/plan/llama31-405b-16384-search.yaml \
  -j 2 --out "$out/plan.csv" 2>&1 | grep -E "^best|^wall|Spearman"
rm -rf "$out"
echo "[target <= 5 min with -j 2]  memwall plan: full layout search, GPT 529.6B on 2,520 A100 (Megatron-LM's row):"
out=$(mktemp -d)
/usr/bin/time -f "wall=%e s, peak RSS of the planner=%M KB" "$build/memwall" plan bench/plan/gpt-529p6b-2520-full.yaml \
  -j 2 --out "$out/plan.csv" 2>&1 | grep -E "^memwall: (dgx|simulating)|^best|^wall|Spearman"
rm -rf "$out"
echo "[target <= 10 s]  memwall plan: enumeration and checks of 1,000,000 layouts (GPT 1.7B on 32 A100; none simulated):"
/usr/bin/time -f "wall=%e s, peak RSS=%M KB" "$build/memwall" plan bench/plan/million-layouts.yaml 2>&1 |
  grep -E "layouts, |^wall" || true
echo "[target <= 30 s]  memwall topo at the GPU limit: fat-tree-2to1, dgx-h100-ndr and dgx-a100-hdr with 131,072 GPUs:"
for fabric in fat-tree-2to1 dgx-h100-ndr dgx-a100-hdr; do
  /usr/bin/time -f "$fabric: wall=%e s, peak RSS=%M KB" "$build/memwall" topo "topologies/$fabric.yaml" --gpus 131072 2>&1 |
    grep -E "wall=|<- auto" || true
done
echo "[target <= 60 s, <= 4 GiB]  DeepSeek-V3-like EP 64 on 2,048 H100 (PP 16, 61 layers, 256 experts), one step; stopped at 600 s:"
timeout 600 /usr/bin/time -f "wall=%e s, peak RSS=%M KB" "$build/bench/bench_scale" bench/moe/deepseek-v3-like-ep64-2048.yaml 0 0 ||
  echo "did not finish in 600 s"
echo "[target < 2 s]  memwall collbench: one all-reduce size (1 GiB, the tuner's pick) on 4,096 H100 (dgx-h100-ndr):"
/usr/bin/time -f "wall=%e s, peak RSS=%M KB" "$build/memwall" collbench dgx-h100-ndr --gpus 4096 --sizes 1GiB 2>&1 |
  grep -E "^ +[0-9]|^wall" || true
echo "[target < 2 s]  memwall collbench: one all-reduce size (8 B) on 4,096 A100 (dgx-a100-hdr):"
/usr/bin/time -f "wall=%e s, peak RSS=%M KB" "$build/memwall" collbench dgx-a100-hdr --gpus 4096 --sizes 8B 2>&1 |
  grep -E "^ +[0-9]|^wall" || true
echo "[target: seconds]  a whole run with failures: Llama 3 405B, 16,384 H100, 54 days, 1,000 seeds (events only, at its simulated 6.877 s step):"
"$build/bench/bench_goodput" scenarios/goodput/llama3-405b-16k.yaml 6.877
