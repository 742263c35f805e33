#!/usr/bin/env bash
# Issue 32's speed target: four 1,024-GPU jobs on a 4,096-GPU 2:1 fat-tree (spread: their rings meet
# on the up-links) simulated together in no more than 2x the time of one 4,096-GPU job. Prints the
# wall times (the simulations' own, from --json) and their ratio; the baselines (each job alone) run
# beside it, as many at once as there are cores, and are shown apart. Then the same jobs packed
# (four-1024-packed.yaml: no link shared).
# Usage: bench/jobs/run.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
one=$("$build/memwall" run --json bench/jobs/one-4096.yaml)
# The same job with every message through SimGrid, as a fabric shared by several jobs needs.
one_msgs=$(MEMWALL_SIMULATE_MESSAGES=1 "$build/memwall" run --json bench/jobs/one-4096.yaml)
start=$(date +%s%N)
four=$(MEMWALL_JOBS_AT_ONCE=1 "$build/memwall" run --json bench/jobs/four-1024.yaml) # one simulation at a time
wall=$(( ($(date +%s%N) - start) / 1000000 ))
# Packed: no link shared, every job's rounds timed without messages.
packed=$(MEMWALL_JOBS_AT_ONCE=1 "$build/memwall" run --json bench/jobs/four-1024-packed.yaml)
/usr/bin/python3 - "$one" "$four" "$wall" "$one_msgs" "$packed" <<'PY'
import json, sys
one, four, wall_ms, msgs = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
packed = json.loads(sys.argv[5])
c = four["cluster"]
print(f"one 4096-GPU job:            {one['sim_wall_s']:.3f} s simulated wall (step {one['step_time_s']:.4f} s)")
print(f"  every message simulated:   {msgs['sim_wall_s']:.3f} s")
print(f"four 1024-GPU jobs together: {c['sim_wall_s']['together']:.3f} s ({c['sim_wall_s']['together'] / one['sim_wall_s']:.2f}x the one job, "
      f"{c['sim_wall_s']['together'] / msgs['sim_wall_s']:.2f}x with its every message; target <= 2x)")
print(f"  each alone (baselines):    {c['sim_wall_s']['alone']:.3f} s in all; the whole command {wall_ms / 1e3:.3f} s")
print("  slowdowns: " + ", ".join(f"{j['job']} {j['slowdown']:.3f}" for j in four["jobs"]))
p = packed["cluster"]["sim_wall_s"]["together"]
print(f"the same jobs packed (no link shared): {p:.3f} s together ({p / one['sim_wall_s']:.2f}x the one job); slowdowns "
      + ", ".join(f"{j['slowdown']:.3f}" for j in packed["jobs"]))
PY
