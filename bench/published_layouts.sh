#!/usr/bin/env bash
# Runs every published layout memwall accepts (scenarios/published/, not those in refused.txt) and
# prints, per run, the simulated step, tokens/s per GPU, MFU, peak memory per GPU and the wall time
# it took. No measured results are compared here (layouts.json has none); this is issue 28's "runs:
# a result" for the rows the published-layouts ctest does not simulate.
# Usage: bench/published_layouts.sh [build-dir] [max-gpus]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
max_gpus=${2:-1000000}
printf "%-40s %6s %9s %10s %6s %8s %8s\n" run gpus step_s tok/s/GPU MFU mem_GB wall_s
for f in scenarios/published/*.yaml; do
  id=$(basename "$f" .yaml)
  grep -q "^$id:" scenarios/published/refused.txt && continue
  gpus=$(sed -n 's/^cluster: {gpus: \([0-9]*\).*/\1/p' "$f")
  [ "$gpus" -gt "$max_gpus" ] && continue
  start=$(date +%s%N)
  if json=$("$build/memwall" run "$f" --json 2>/dev/null); then
    wall=$(( ($(date +%s%N) - start) / 1000000 ))
    /usr/bin/python3 -c "import json,sys; r=json.loads(sys.argv[1]); print('%-40s %6s %9.3f %10.1f %6.3f %8.1f %8.1f' % (sys.argv[2], sys.argv[3], r['step_time_s'], r['tokens_per_s_per_gpu'], r['mfu'], r['footprint_bytes'] / 1e9, int(sys.argv[4]) / 1e3))" "$json" "$id" "$gpus" "$wall"
  else
    echo "$id: memwall run failed (exit $?)"
  fi
done
