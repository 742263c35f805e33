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


def check_stall(memwall, tmp):
    """A deadlock in SimGrid ends in a stall report with exit 1: no result row, no trace file."""
    scenario = os.path.join(HERE, "stall-scenarios", "nic-down-hierarchical.yaml")
    trace = os.path.join(tmp, "stall.h5")
    for extra in ([], ["--json"], ["--trace", trace]):
        p = run(memwall, "run", scenario, *extra)
        expect(p.returncode == 1, f"run {extra}: exit {p.returncode}, expected 1")
        expect("stalled" in p.stderr and "gpu000003-nic down" in p.stderr,
               f"run {extra}: no stall report naming the event: {p.stderr!r}")
        expect("NIC of GPU 3" not in p.stdout and "step_time_s" not in p.stdout,
               f"run {extra}: a result was printed: {p.stdout!r}")
    expect(not os.listdir(tmp), f"files left behind: {os.listdir(tmp)}")


MODES = {"stall": check_stall}


def main():
    memwall, mode = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        MODES[mode](memwall, tmp)
    print(f"{mode}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
