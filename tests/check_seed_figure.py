#!/usr/bin/env python3
"""analysis/seed_figure.py, drawing from memwall's own model, must reproduce the seed's figure
(tests/data/seed_figure.png, a copy of shared/seed/fig_backprop_memory_wall.png) pixel for pixel,
up to a small tolerance for rendering differences.

Usage: check_seed_figure.py MEMWALL
"""
import os
import subprocess
import sys
import tempfile

import matplotlib.image as image
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "fig.png")
        subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "seed_figure.py"), "--memwall", sys.argv[1],
                        "--out", out], check=True)
        got, want = image.imread(out), image.imread(os.path.join(HERE, "data", "seed_figure.png"))
    if got.shape != want.shape:
        print(f"size {got.shape} != seed's {want.shape}\n0 passed, 1 failed")
        return 1
    diff = np.abs(got - want).max(axis=2)
    changed = float(np.mean(diff > 0.1))
    print(f"mean |difference| {float(diff.mean()):.2e}, pixels that differ: {100 * changed:.3f}%")
    ok = changed < 0.005
    print(f"{int(ok)} passed, {int(not ok)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
