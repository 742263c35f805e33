#!/usr/bin/env python3
"""Reliability regressions (issue 11): no wrong number printed as a result, no crash on bad input,
no unsafe or partial output. One mode per class of failure.

Usage: check_reliability.py MEMWALL MODE
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(memwall, *args, **kwargs):
    return subprocess.run([memwall, *args], capture_output=True, text=True, timeout=120, **kwargs)


MODES = {}


def main():
    memwall, mode = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        MODES[mode](memwall, tmp)
    print(f"{mode}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
