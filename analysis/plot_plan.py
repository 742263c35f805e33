#!/usr/bin/env python3
"""The layouts `memwall plan` simulated: throughput per GPU against memory per GPU, one marker per
simulated layout, one panel per fabric side by side (shared axes, so fabrics compare at a glance).
The best layout of each fabric is ringed and labelled; the marker's colour is its tensor-parallel
degree, its shape its pipeline degree's class.

Usage: plot_plan.py RESULTS.csv|RESULTS.h5 [--out plan.png] [--hbm-gb 80]
The y-axis starts at zero, so that layouts within a percent of each other look it.
RESULTS comes from `memwall plan PLAN.yaml --out RESULTS.csv` (or a `memwall merge` of its shards).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402
import sweep_csv  # noqa: E402

PIPELINE_CLASSES = (("o", "no pipeline"), ("s", "pipeline"), ("^", "interleaved pipeline"))


def main():
    ap = figure_style.parser(__doc__)
    ap.add_argument("results", help="plan results (.csv or .h5) from memwall plan --out")
    figure_style.add_out(ap, "plan.png")
    ap.add_argument("--hbm-gb", type=float, default=0, help="draw the GPU's memory as a labelled line (GB)")
    args = ap.parse_args()
    rows = [r for r in sweep_csv.load(args.results) if r.get("status", "ok") == "ok"]
    if not rows or "estimate_rank" not in rows[0]:
        print(f"plot_plan.py: error: {args.results}: no simulated layouts of a memwall plan", file=sys.stderr)
        return 2
    plt = figure_style.plt

    fabrics = []
    for r in rows:
        if r["fabric"] not in fabrics:
            fabrics.append(r["fabric"])
    fig, axes = plt.subplots(1, len(fabrics), figsize=(5.5 * len(fabrics), 4.8), sharex=True, sharey=True,
                             squeeze=False)
    colours = {1: "#7f8c8d", 2: "#2980b9", 4: "#27ae60", 8: "#c0392b", 16: "#8e44ad"}
    top = max(r["tokens_per_s_per_gpu"] for r in rows)
    for ax, fabric in zip(axes[0], fabrics):
        mine = [r for r in rows if r["fabric"] == fabric]
        best = max(mine, key=lambda r: r["tokens_per_s_per_gpu"])
        # One labelled group per (TP degree, pipeline class) that exists: the legend lists what is drawn.
        groups = {}
        for r in mine:
            marker, kind = PIPELINE_CLASSES[0 if int(r["pipeline"]) == 1 else (1 if int(r["virtual_stages"]) == 1 else 2)]
            groups.setdefault((int(r["tensor"]), marker, kind), []).append(r)
        for (tp, marker, kind), pts in sorted(groups.items()):
            ax.scatter([r["memory_bytes"] / 1e9 for r in pts], [r["tokens_per_s_per_gpu"] for r in pts], s=40,
                       color=colours.get(tp, "black"), marker=marker, label=f"TP {tp}, {kind}")
        ax.scatter(best["memory_bytes"] / 1e9, best["tokens_per_s_per_gpu"], s=160, facecolors="none",
                   edgecolors="black", linewidths=1.5, label="best layout")
        ax.annotate(str(best["layout"]).split(",")[0], (best["memory_bytes"] / 1e9, best["tokens_per_s_per_gpu"]),
                    textcoords="offset points", xytext=(6, 6), fontsize=8)
        if args.hbm_gb > 0:
            ax.axvline(args.hbm_gb, color="grey", linestyle="--", linewidth=1, label=f"HBM {args.hbm_gb:g} GB")
        ax.set_title(figure_style.wrap(f"{fabric}: best {best['tokens_per_s_per_gpu']:.1f} tokens/s/GPU", 48),
                     fontsize=10)
        ax.set_xlabel("memory per GPU [GB]")
        ax.set_ylabel("simulated tokens/s per GPU")
        # From zero: layouts within 1% of each other look within 1% (no zoom to 4,000-4,035).
        ax.set_ylim(0, top * 1.12)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"memwall plan: simulated layouts per fabric ({len(rows)} layouts)")
    fig.tight_layout()
    figure_style.save(fig, args.out, dpi=120)
    print(f"wrote {args.out} ({len(rows)} layouts, {len(fabrics)} fabric(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
