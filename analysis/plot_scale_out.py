#!/usr/bin/env python3
"""Gradient-accumulation / DP scale-out study: ms/token, mJ/token and slowdown against tokens per
GPU per step, one line per (fabric, N): a colour per N, a line style and marker per fabric, so that
lines that meet stay visible.

Usage: plot_scale_out.py RESULTS.csv|RESULTS.h5 [--out scale-out.png]
RESULTS comes from `memwall sweep scenarios/scale-out-study.yaml --out RESULTS.csv`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402
from figure_style import plt  # noqa: E402
from sweep_csv import fabric_label, load  # noqa: E402

STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D")]


def main():
    parser = figure_style.parser(__doc__)
    parser.add_argument("results", help="memwall sweep results (.csv, .h5 or .hdf5)")
    figure_style.add_out(parser, "scale-out.png")
    args = parser.parse_args()
    rows = load(args.results)
    series = {}
    for r in rows:
        series.setdefault((fabric_label(r), int(r["gpus"])), []).append(r)
    fabrics = sorted({f for f, _ in series})
    sizes = sorted({n for _, n in series})
    colours = plt.cm.viridis([i / max(1, len(sizes) - 1) * 0.85 for i in range(len(sizes))])
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    panels = [("ms_per_token", "time per token [ms]"), ("mj_per_token", "energy per token [mJ]"),
              ("slowdown", "slowdown vs. peak FLOP/s [x]")]
    for ax, (key, label) in zip(axes, panels):
        for (fabric, n), pts in sorted(series.items()):
            pts.sort(key=lambda r: r["tokens_per_gpu"])
            ls, marker = STYLES[fabrics.index(fabric) % len(STYLES)]
            # Larger markers for smaller N, drawn first: equal results (NVLink at any N) stay visible.
            k = sizes.index(n)
            ax.plot([p["tokens_per_gpu"] for p in pts], [p[key] for p in pts], marker=marker,
                    ms=4 + 3 * (len(sizes) - 1 - k), ls=ls, lw=1.4, color=colours[k], alpha=0.8,
                    zorder=2 + k, label=f"{fabric}, N={n}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tokens per GPU per optimizer step")
        ax.set_ylabel(label)
        ax.set_title(label.split(" [")[0], fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle("Gradient accumulation vs. data-parallel scale-out (simulated, memwall)")
    fig.tight_layout()
    figure_style.save(fig, args.out)
    print(f"wrote {args.out} ({len(rows)} points)")


if __name__ == "__main__":
    main()
