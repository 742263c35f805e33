#!/usr/bin/env bash
# Builds memwall with AddressSanitizer + UndefinedBehaviorSanitizer (Debug, -O1: assertions on) into
# build-asan/ and runs the whole test suite there. A sanitizer report fails the run even where the
# test that triggered it passed (a child process's report, an expected non-zero exit): reports go
# to files, which this script lists and counts at the end. Usage: scripts/test-sanitized.sh [ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMEMWALL_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$(nproc)"
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
# Distinct exit codes, so that no test mistakes a sanitizer's exit for an expected failure.
export ASAN_OPTIONS="log_path=$reports/asan:exitcode=86:detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:exitcode=87:print_stacktrace=1:halt_on_error=1"
status=0
(cd build-asan && ctest --output-on-failure -j "$(nproc)" "$@") || status=$?
if compgen -G "$reports/*" >/dev/null; then
  echo "sanitizer reports:"
  for f in "$reports"/*; do
    echo "== $f"
    head -60 "$f"
  done
  echo "$(ls "$reports" | wc -l) sanitizer report(s)"
  exit 1
fi
echo "sanitized suite: no sanitizer reports"
exit "$status"
