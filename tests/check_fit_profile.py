#!/usr/bin/env python3
"""analysis/fit_profile.py rewrites the profile it fits: the shipped H100 and A100 entries rewritten
with their own values predict exactly what the shipped catalog predicts, and other values change the
predictions (so a fit reaches the profile memwall runs).

Usage: check_fit_profile.py MEMWALL
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "analysis"))
import fit_profile  # noqa: E402

SHIPPED = {"H100-SXM-calibrated": (0.44, 0.67, 0.17), "A100-40GB-calibrated": (0.56, 0.80, 0.35)}


def main():
    memwall = sys.argv[1]
    catalog = os.path.join(HERE, "..", "model", "gpus.yaml")
    folder = os.path.join(HERE, "..", "scenarios", "validation")
    base = open(catalog).read()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpus.yaml")
        for gpu, values in SHIPPED.items():
            files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.startswith(gpu[:4].lower()))
            shipped = fit_profile.errors(memwall, catalog, files, gpu)
            for trial, same in ((values, True), ((values[0], values[1] - 0.1, values[2]), False)):
                with open(path, "w") as f:
                    f.write(fit_profile.with_efficiencies(base, gpu, fit_profile.candidate_lines(*trial)))
                rewritten = fit_profile.errors(memwall, path, files, gpu)
                ok = len(rewritten) == len(shipped) > 0 and (rewritten == shipped) == same
                failures += not ok
                print(f"{gpu} rewritten with {trial}: {len(rewritten)} runs, "
                      f"{'same as' if rewritten == shipped else 'differ from'} the shipped catalog: "
                      f"{'ok' if ok else 'FAIL'}")
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
