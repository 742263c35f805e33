#!/usr/bin/env python3
"""The analysis scripts as a user runs them: `--help` on every analysis/*.py script exits 0, and the
plot scripts draw from a sweep's results written as CSV and as HDF5, which load to the same rows
(every number equal, the text columns equal).

Usage: check_analysis.py MEMWALL REPO_ROOT
"""
import math
import os
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"


def main():
    memwall, root = sys.argv[1], os.path.abspath(sys.argv[2])
    analysis = os.path.join(root, "analysis")
    sys.path.insert(0, analysis)
    import sweep_csv

    failures = []
    for script in sorted(os.listdir(analysis)):
        if not script.endswith(".py") or script in ("sweep_csv.py", "trace_io.py"):  # modules, not scripts
            continue
        run = subprocess.run([PY, os.path.join(analysis, script), "--help"], capture_output=True, text=True)
        if run.returncode != 0 or "usage" not in run.stdout.lower():
            failures.append(f"{script} --help: exit {run.returncode}: {run.stderr.strip()[-300:]}")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for ext in ("csv", "h5"):
            out = os.path.join(tmp, "squeeze." + ext)
            run = subprocess.run([memwall, "sweep", os.path.join(root, "scenarios", "batch-squeeze.yaml"), "-j", "2",
                                  "--out", out], capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"sweep --out {out}: exit {run.returncode}: {run.stderr}")
            results[ext] = sweep_csv.load(out)
            for plot in ("plot_squeeze.py", "plot_scale_out.py"):
                png = os.path.join(tmp, f"{plot}.{ext}.png")
                run = subprocess.run([PY, os.path.join(analysis, plot), out, png], capture_output=True, text=True)
                if run.returncode != 0 or not os.path.getsize(png) > 1000:
                    failures.append(f"{plot} {out}: exit {run.returncode}: {run.stderr.strip()[-300:]}")
        csv_rows, h5_rows = results["csv"], results["h5"]
        if not csv_rows or len(csv_rows) != len(h5_rows):
            failures.append(f"{len(csv_rows)} CSV rows, {len(h5_rows)} HDF5 rows")
        for a, b in zip(csv_rows, h5_rows):
            for key, value in a.items():
                other = b.get(key)
                same = (isinstance(value, float) and isinstance(other, float)
                        and (value == other or (math.isnan(value) and math.isnan(other)))) or value == other
                if not same and not (value == "" and isinstance(other, float) and math.isnan(other)):
                    failures.append(f"point {a.get('point')}: {key} is {value!r} in CSV, {other!r} in HDF5")
        print(f"{len(csv_rows)} points from CSV and HDF5 agree; plots drawn from both")
        missing = subprocess.run([PY, os.path.join(analysis, "plot_squeeze.py"), os.path.join(tmp, "none.h5"),
                                  os.path.join(tmp, "x.png")], capture_output=True, text=True)
        if missing.returncode != 2 or "none.h5" not in missing.stderr:
            failures.append(f"a missing results file: exit {missing.returncode}, {missing.stderr.strip()}")
    if failures:
        sys.exit("\n".join(failures[:20]))


if __name__ == "__main__":
    main()
