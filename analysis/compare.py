#!/usr/bin/env python3
"""Side-by-side comparison of memwall traces (what-if studies): a table of the headline metrics and
a bar chart of time and energy per token split into their parts. Time is split as the step
breakdown (compute, TP, CP, EP, pipeline, DP, optimizer, waiting; it sums to the step time);
traces written before the breakdown existed show compute, communication and optimizer.

Usage: compare.py A.h5 B.h5 [...] [--out compare.png]
The traces come from `memwall run SCENARIO --trace A.h5`; scenario names are wrapped, never cut.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402
from figure_style import plt  # noqa: E402
from trace_io import Trace  # noqa: E402

TIME_PARTS = [("breakdown_compute_s", "compute", "#1f618d"), ("breakdown_tp_s", "tensor parallel", "#7d3c98"),
              ("breakdown_cp_s", "context parallel", "#af7ac5"), ("breakdown_ep_s", "expert parallel", "#e74c3c"),
              ("breakdown_pp_transfer_s", "pipeline transfer", "#2e4053"),
              ("breakdown_pp_bubble_s", "pipeline bubble", "#808b96"), ("breakdown_dp_s", "data parallel", "#d68910"),
              ("breakdown_optimizer_s", "optimizer", "#b03a2e"), ("breakdown_wait_s", "waiting", "#d5d8dc")]
OLD_TIME_PARTS = [("t_compute_s", "compute", "#1f618d"), ("t_allreduce_s", "communication", "#d68910"),
                  ("t_optimizer_s", "optimizer", "#b03a2e")]

ROWS = [("gpus", "GPUs", "{:.0f}"), ("tokens_per_gpu", "tokens/step/GPU", "{:.0f}"),
        ("step_time_s", "step time [s]", "{:.4f}"), ("t_compute_s", "compute [s]", "{:.4f}"),
        ("t_allreduce_s", "all-reduce [s]", "{:.4f}"), ("t_optimizer_s", "optimizer [s]", "{:.5f}"),
        ("ms_per_token", "ms/token", "{:.3f}"), ("mj_per_token", "mJ/token", "{:.3f}"),
        ("arith_pct", "arith %", "{:.1f}"), ("hbm_pct", "HBM %", "{:.1f}"), ("static_pct", "static %", "{:.1f}"),
        ("network_pct", "network %", "{:.1f}"), ("slowdown", "slowdown", "{:.2f}")]


def main():
    p = figure_style.parser(__doc__)
    p.add_argument("traces", nargs="+", help="HDF5 traces of the runs to compare")
    figure_style.add_out(p, "compare.png")
    a = p.parse_args()
    traces = [Trace(path) for path in a.traces]
    labels = [t.name for t in traces]
    width = max(14, *(len(l) for l in labels))
    print(f"{'':18s}" + "".join(f" {l:>{width}s}" for l in labels))
    for key, label, fmt in ROWS:
        print(f"{label:18s}" + "".join(f" {fmt.format(t.summary[key]):>{width}s}" for t in traces))

    fig, axes = plt.subplots(1, 2, figsize=(max(12, 2.2 * len(traces) + 6), 5))
    x = np.arange(len(traces))
    bottom = np.zeros(len(traces))
    parts = TIME_PARTS if all("breakdown_compute_s" in t.summary for t in traces) else OLD_TIME_PARTS
    for key, label, color in parts:
        v = np.array([1e3 * t.summary[key] / t.summary["tokens_per_gpu"] for t in traces])
        if not v.any():
            continue  # a part no run has: not in the legend either
        axes[0].bar(x, v, bottom=bottom, label=label, color=color)
        bottom += v
    axes[0].set_ylim(0, 1.1 * bottom.max())
    axes[0].set_ylabel("time per token [ms]")
    bottom = np.zeros(len(traces))
    for key, label, color in [("e_arith_j", "arithmetic", "#1f618d"), ("e_hbm_j", "HBM", "#c0392b"),
                              ("e_static_j", "static", "#95a5a6"), ("e_network_j", "network", "#7d3c98")]:
        v = np.array([1e3 * t.summary[key] / t.summary["tokens_per_gpu"] for t in traces])
        if not v.any():
            continue
        axes[1].bar(x, v, bottom=bottom, label=label, color=color)
        bottom += v
    axes[1].set_ylabel("energy per token [mJ]")
    axes[1].set_ylim(0, 1.1 * bottom.max())  # headroom over the tallest stack: nothing clipped
    axes[0].set_title("where the time goes", fontsize=10)
    axes[1].set_title("where the joules go", fontsize=10)
    for ax in axes:
        ax.set_xticks(x)
        ax.set_xticklabels([figure_style.wrap(l) for l in labels], fontsize=8)
        ax.set_xlabel("scenario")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("memwall what-if comparison (per GPU, per token)")
    fig.tight_layout()
    figure_style.save(fig, a.out)
    print(f"\nwrote {a.out}")


if __name__ == "__main__":
    main()
