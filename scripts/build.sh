#!/usr/bin/env bash
# Configures and builds memwall (Release) into build/. Usage: scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
