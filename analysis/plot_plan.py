#!/usr/bin/env python3
"""The layouts `memwall plan` simulated: throughput per GPU against memory per GPU, one marker per
simulated layout, one panel per fabric side by side (shared axes, so fabrics compare at a glance).
The best layout of each fabric is ringed and labelled; the marker's colour is its tensor-parallel
degree, its shape its pipeline degree's class.

Usage: plot_plan.py RESULTS.csv|RESULTS.h5 [--out plan.png] [--hbm-gb 80]
RESULTS comes from `memwall plan PLAN.yaml --out RESULTS.csv` (or a `memwall merge` of its shards).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep_csv  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="plan results (.csv or .h5) from memwall plan --out")
    ap.add_argument("--out", default="plan.png", help="figure file (default: plan.png)")
    ap.add_argument("--hbm-gb", type=float, default=0, help="draw the GPU's memory as a line (GB)")
    args = ap.parse_args()
    rows = sweep_csv.load(args.results)
    if not rows or "estimate_rank" not in rows[0]:
        print(f"plot_plan.py: error: {args.results}: no simulated layouts of a memwall plan", file=sys.stderr)
        return 2
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fabrics = []
    for r in rows:
        if r["fabric"] not in fabrics:
            fabrics.append(r["fabric"])
    fig, axes = plt.subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4.5), sharex=True, sharey=True,
                             squeeze=False)
    colours = {1: "#7f8c8d", 2: "#2980b9", 4: "#27ae60", 8: "#c0392b", 16: "#8e44ad"}
    for ax, fabric in zip(axes[0], fabrics):
        mine = [r for r in rows if r["fabric"] == fabric]
        best = max(mine, key=lambda r: r["tokens_per_s_per_gpu"])
        for r in mine:
            ax.scatter(r["memory_bytes"] / 1e9, r["tokens_per_s_per_gpu"], s=40,
                       color=colours.get(int(r["tensor"]), "black"),
                       marker="o" if int(r["pipeline"]) == 1 else ("s" if int(r["virtual_stages"]) == 1 else "^"))
        ax.scatter(best["memory_bytes"] / 1e9, best["tokens_per_s_per_gpu"], s=160, facecolors="none",
                   edgecolors="black", linewidths=1.5)
        ax.annotate(str(best["layout"]).split(",")[0], (best["memory_bytes"] / 1e9, best["tokens_per_s_per_gpu"]),
                    textcoords="offset points", xytext=(6, 6), fontsize=8)
        if args.hbm_gb > 0:
            ax.axvline(args.hbm_gb, color="grey", linestyle="--", linewidth=1)
        ax.set_title(f"{fabric}: best {best['tokens_per_s_per_gpu']:.1f} tokens/s/GPU", fontsize=10)
        ax.set_xlabel("memory per GPU (GB)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("simulated tokens/s per GPU")
    handles = [plt.Line2D([], [], color=c, marker="o", linestyle="", label=f"TP {t}") for t, c in colours.items()]
    handles += [plt.Line2D([], [], color="black", marker=m, linestyle="", label=l)
                for m, l in (("o", "no pipeline"), ("s", "pipeline"), ("^", "interleaved pipeline"))]
    axes[0][-1].legend(handles=handles, fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out} ({len(rows)} layouts, {len(fabrics)} fabric(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
