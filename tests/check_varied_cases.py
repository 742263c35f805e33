#!/usr/bin/env python3
"""Simulates the varied scenarios of data/varied_cases.csv and compares each with the seed's
formulas (the CSV's expected columns, produced by data/make_varied_cases.py), within 0.1%.

Usage: check_varied_cases.py MEMWALL
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 1e-3
COMPARED = ["step_time_s", "energy_j", "e_arith_j", "e_hbm_j", "e_static_j", "t_allreduce_s", "t_optimizer_s",
            "intensity", "slowdown"]


def scenario_yaml(row):
    fabric = f"  fabric: {{kind: star, bandwidth: {row['link_bytes_per_s']}, latency: 0s}}\n"
    return (f"name: {row['name']}\n"
            f"gpu: \"{row['gpu']}\"\n"
            f"model: {{hidden: {row['hidden']}, layers: {row['layers']}, seq_len: {row['seq_len']}, "
            f"vocab: {row['vocab']}}}\n"
            f"batch: {{tokens_per_microbatch: {row['tokens_per_microbatch']}, microbatches: {row['microbatches']}}}\n"
            f"cluster:\n  gpus: {row['gpus']}\n" + fabric + "allow_oom: true\n")


def main():
    memwall = sys.argv[1]
    rows = list(csv.DictReader(open(os.path.join(HERE, "data", "varied_cases.csv"))))
    with tempfile.TemporaryDirectory() as tmp:
        for i, row in enumerate(rows):
            with open(os.path.join(tmp, f"{i:02d}.yaml"), "w") as f:
                f.write(scenario_yaml(row))
        out = subprocess.run([memwall, "run", "--json", tmp], check=True, capture_output=True, text=True).stdout
    got = {r["name"]: r for r in map(json.loads, out.splitlines())}
    failures, compared = 0, 0
    for row in rows:
        result = got.get(row["name"])
        if result is None:
            print(f"{row['name']}: no result")
            failures += 1
            continue
        for key in COMPARED:
            want, have = float(row[key]), float(result[key])
            compared += 1
            err = abs(have - want) / abs(want) if want else abs(have)
            if err > TOLERANCE:
                failures += 1
                print(f"{row['name']}: {key} = {have!r}, seed formula {want!r} (relative error {err:.2e})")
    print(f"{len(rows)} scenarios, {compared} figures compared, {failures} outside {TOLERANCE:.0e}")
    return 1 if failures or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
