#!/usr/bin/env python3
"""The batch squeeze (seed Table 6) from simulated sweep results: fixed per-step cost in
token-equivalents and the time-optimal batch per GPU against N, per fabric. Token-equivalents at
the rate the GPU achieves on the model's GEMMs (peak x gemm_efficiency), as `memwall sweep`'s
squeeze report counts them.

Usage: plot_squeeze.py RESULTS.csv|RESULTS.h5 [--out squeeze.png] [--b-crit 1e6]
RESULTS comes from `memwall sweep scenarios/batch-squeeze.yaml --out RESULTS.csv`.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402
from figure_style import plt  # noqa: E402
from sweep_csv import fabric_label, load  # noqa: E402


def main():
    parser = figure_style.parser(__doc__)
    parser.add_argument("results", help="memwall sweep results (.csv, .h5 or .hdf5)")
    figure_style.add_out(parser, "squeeze.png")
    parser.add_argument("--b-crit", type=float, default=1e6, help="critical batch size in tokens (default 1e6)")
    args = parser.parse_args()
    rows = load(args.results)
    b_crit = args.b_crit
    series = {}
    for r in rows:
        rate = r["gpu_peak_flops_per_s"] * r.get("gemm_efficiency", 1.0)
        t_fixed = (r["t_allreduce_s"] + r["t_optimizer_s"]) * rate / (6 * r["params"])
        b_opt = math.sqrt(b_crit * r["gpus"] * t_fixed)
        series.setdefault(fabric_label(r), []).append((r["gpus"], t_fixed, b_opt / r["gpus"]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for fabric, pts in series.items():
        pts.sort()
        axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=fabric)
        axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=fabric)
    axes[0].set_ylabel("T_fixed [token-equivalents per GPU]")
    axes[1].set_ylabel("T_dev,opt = B_opt / N [tokens per GPU]")
    axes[0].set_title("fixed cost per step", fontsize=10)
    axes[1].set_title("time-optimal tokens per GPU", fontsize=10)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("data-parallel GPUs N")
        ax.grid(alpha=0.3, which="both")
        ax.legend()
    fig.suptitle(f"Batch squeeze, simulated (B_crit = {b_crit:.0e} tokens)")
    fig.tight_layout()
    figure_style.save(fig, args.out)
    print(f"wrote {args.out} ({len(rows)} points)")


if __name__ == "__main__":
    main()
