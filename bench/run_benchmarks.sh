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
