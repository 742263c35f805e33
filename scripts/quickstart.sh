#!/usr/bin/env bash
# Quick start: install what is missing, build (Release), run the default job (the seed's worked example).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
./build/memwall "$@"
