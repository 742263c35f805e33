#!/usr/bin/env python3
"""The published training layouts (scenarios/published/, one per row of
../shared/published-layouts/layouts.json): every file is accepted by `memwall validate`, or refused
(exit 2) for the reason scenarios/published/refused.txt lists for it. A refusal that goes away, or
a new one, fails: the list is the honest state of issue 28's acceptance, and shrinks as memwall
learns these runs. Also: one file per published row, none left over, none missing.

Usage: check_published.py MEMWALL PUBLISHED_DIR [LAYOUTS_JSON]
"""
import json
import os
import subprocess
import sys


def main():
    memwall, folder = sys.argv[1], sys.argv[2]
    layouts = sys.argv[3] if len(sys.argv) > 3 else None
    refused = {}
    with open(os.path.join(folder, "refused.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                run_id, reason = line.split(":", 1)
                refused[run_id.strip()] = reason.strip()
    files = sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".yaml"))
    failures = []
    if layouts and os.path.exists(layouts):
        ids = sorted(r["id"] for r in json.load(open(layouts)))
        if ids != files:
            failures.append(f"files differ from the published rows: missing {sorted(set(ids) - set(files))}, "
                            f"extra {sorted(set(files) - set(ids))}")
    for name in sorted(set(refused) - set(files)):
        failures.append(f"refused.txt lists {name}, which has no file")
    accepted = 0
    for name in files:
        path = os.path.join(folder, name + ".yaml")
        text = open(path).read()
        if not text.startswith(f"# {name}: ") or "\n# Source: " not in text:
            failures.append(f"{name}: the file does not open with its run and its source")
        run = subprocess.run([memwall, "validate", path], capture_output=True, text=True, timeout=120)
        message = (run.stdout + run.stderr).strip()
        if name in refused:
            if run.returncode != 2 or refused[name] not in message:
                failures.append(f"{name}: listed as refused for '{refused[name]}', got exit {run.returncode}: "
                                f"{message[-300:]}")
        elif run.returncode != 0:
            failures.append(f"{name}: exit {run.returncode}: {message[-300:]}")
        else:
            accepted += 1
    print(f"{accepted} of {len(files)} published layouts accepted, {len(refused)} refused as listed")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
