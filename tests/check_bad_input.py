#!/usr/bin/env python3
"""Every malformed scenario in bad-scenarios/ must be refused by `memwall validate` and `memwall run`
with exit code 2 and exactly one error line naming the file, the line and the key given in the
file's first line (`# expect: LINE KEY`, KEY '-' for none). Bad GPU catalogs likewise, and every bad
fabric file in bad-fabrics/ by `memwall topo` (`# expect: LINE KEY GPUS REASON...`).

Usage: check_bad_input.py MEMWALL
"""
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def check(cmd, path, line, key, env=None, reason=""):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    problems = []
    if p.returncode != 2:
        problems.append(f"exit code {p.returncode}, expected 2")
    err = p.stderr.strip().splitlines()
    if len(err) != 1:
        problems.append(f"{len(err)} error lines, expected 1: {p.stderr!r}")
    elif not err[0].startswith(f"memwall: error: {path}:{line}: "):
        problems.append(f"error does not name {path}:{line}: {err[0]!r}")
    elif key != "-" and f": {key}: " not in err[0]:
        problems.append(f"error does not name key {key}: {err[0]!r}")
    elif reason and reason not in err[0]:
        problems.append(f"error does not give the reason '{reason}': {err[0]!r}")
    if p.stdout.strip():
        problems.append(f"printed output despite the error: {p.stdout!r}")
    return problems


BAD_CATALOGS = {
    # name: (text, line, key)
    "negative-peak": ("gpus:\n  - name: X\n    peak: -1TFLOP/s\n", 3, "gpus[0].peak"),
    "unknown-field": ("gpus:\n  - name: X\n    peek: 1TFLOP/s\n", 3, "gpus[0].peek"),
    "missing-field": ("gpus:\n  - name: X\n    peak: 1TFLOP/s\n", 2, "gpus[0]"),
}


def main():
    memwall = sys.argv[1]
    failures, cases = 0, 0
    for path in sorted(glob.glob(os.path.join(HERE, "bad-scenarios", "*.yaml"))):
        line, key = open(path, errors="replace").readline().split()[2:4]
        for cmd in ([memwall, "validate", path], [memwall, "run", path]):
            cases += 1
            for problem in check(cmd, path, line, key):
                failures += 1
                print(f"{os.path.basename(path)} ({cmd[1]}): {problem}")
    for path in sorted(glob.glob(os.path.join(HERE, "bad-fabrics", "*.yaml"))):
        words = open(path).readline().split()
        line, key, gpus, reason = words[2], words[3], words[4], " ".join(words[5:])
        cases += 1
        for problem in check([memwall, "topo", path, "--gpus", gpus], path, line, key, reason=reason):
            failures += 1
            print(f"{os.path.basename(path)} (topo): {problem}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (text, line, key) in BAD_CATALOGS.items():
            path = os.path.join(tmp, name + ".yaml")
            open(path, "w").write(text)
            env = dict(os.environ, MEMWALL_GPU_CATALOG=path)
            cases += 1
            for problem in check([memwall, "gpus"], path, line, key, env):
                failures += 1
                print(f"catalog {name}: {problem}")
    print(f"{cases} bad inputs checked, {failures} problems")
    return 1 if failures or cases < 12 else 0


if __name__ == "__main__":
    sys.exit(main())
