#!/usr/bin/env python3
"""Side-by-side comparison of memwall traces (what-if studies): a table of the headline metrics and
a bar chart of time and energy per token split into their parts.

Usage: compare.py A.h5 B.h5 [...] [--out compare.png]
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from trace_io import Trace

ROWS = [("gpus", "GPUs", "{:.0f}"), ("tokens_per_gpu", "tokens/step/GPU", "{:.0f}"),
        ("step_time_s", "step time [s]", "{:.4f}"), ("t_compute_s", "compute [s]", "{:.4f}"),
        ("t_allreduce_s", "all-reduce [s]", "{:.4f}"), ("t_optimizer_s", "optimizer [s]", "{:.5f}"),
        ("ms_per_token", "ms/token", "{:.3f}"), ("mj_per_token", "mJ/token", "{:.3f}"),
        ("arith_pct", "arith %", "{:.1f}"), ("hbm_pct", "HBM %", "{:.1f}"), ("static_pct", "static %", "{:.1f}"),
        ("network_pct", "network %", "{:.1f}"), ("slowdown", "slowdown", "{:.2f}")]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("traces", nargs="+")
    p.add_argument("--out", default="compare.png")
    a = p.parse_args()
    traces = [Trace(path) for path in a.traces]
    labels = [t.name for t in traces]
    width = max(14, *(min(len(l), 28) for l in labels))
    print(f"{'':18s}" + "".join(f" {l[:28]:>{width}s}" for l in labels))
    for key, label, fmt in ROWS:
        print(f"{label:18s}" + "".join(f" {fmt.format(t.summary[key]):>{width}s}" for t in traces))

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    x = np.arange(len(traces))
    bottom = np.zeros(len(traces))
    for key, label, color in [("t_compute_s", "compute", "#1f618d"), ("t_allreduce_s", "all-reduce", "#d68910"),
                              ("t_optimizer_s", "optimizer", "#b03a2e")]:
        v = np.array([1e3 * t.summary[key] / t.summary["tokens_per_gpu"] for t in traces])
        axes[0].bar(x, v, bottom=bottom, label=label, color=color)
        bottom += v
    axes[0].set_ylabel("time per token [ms]")
    bottom = np.zeros(len(traces))
    for key, label, color in [("e_arith_j", "arithmetic", "#1f618d"), ("e_hbm_j", "HBM", "#c0392b"),
                              ("e_static_j", "static", "#95a5a6"), ("e_network_j", "network", "#7d3c98")]:
        v = np.array([1e3 * t.summary[key] / t.summary["tokens_per_gpu"] for t in traces])
        axes[1].bar(x, v, bottom=bottom, label=label, color=color)
        bottom += v
    axes[1].set_ylabel("energy per token [mJ]")
    for ax in axes:
        ax.set_xticks(x)
        ax.set_xticklabels([l[:24] for l in labels], rotation=15, ha="right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        ax.legend()
    fig.suptitle("memwall what-if comparison (per GPU, per token)")
    fig.tight_layout()
    fig.savefig(a.out, dpi=130)
    print(f"\nwrote {a.out}")


if __name__ == "__main__":
    main()
