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
