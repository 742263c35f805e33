#!/usr/bin/env bash
# Runs a memwall sweep as a SLURM job array: task K of M runs the K-th slice of the points.
#
#   sbatch --array=1-16 --cpus-per-task=8 scripts/slurm-sweep.sh scenarios/scale-out-study.yaml results/
#   # when all tasks are done:
#   build/memwall merge --out results/all.csv results/shard-*.csv
#
# Each task writes results/shard-K.csv; resubmitting the array resumes unfinished points.
#SBATCH --job-name=memwall-sweep
#SBATCH --output=memwall-sweep-%A_%a.log
set -euo pipefail
sweep=${1:?usage: slurm-sweep.sh SWEEP.yaml OUT_DIR}
out_dir=${2:?usage: slurm-sweep.sh SWEEP.yaml OUT_DIR}
memwall=${MEMWALL:-$(dirname "$0")/../build/memwall}
k=${SLURM_ARRAY_TASK_ID:?run under sbatch --array}
m=${SLURM_ARRAY_TASK_COUNT:?run under sbatch --array}
mkdir -p "$out_dir"
exec "$memwall" sweep "$sweep" --shard "$k/$m" -j "${SLURM_CPUS_PER_TASK:-1}" --resume --out "$out_dir/shard-$k.csv"
