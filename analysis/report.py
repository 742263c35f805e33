#!/usr/bin/env python3
"""Report on one memwall trace: the seed's Table 5 columns, a per-phase time and energy breakdown,
a stacked energy bar and a Gantt chart of the first GPUs (PNG).

Usage: report.py TRACE.h5 [--out-dir DIR] [--gpus N]
Writes DIR/<trace>-energy.png and DIR/<trace>-gantt.png (DIR defaults to the trace's folder).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402
from figure_style import plt  # noqa: E402
from trace_io import Trace  # noqa: E402

ENERGY_PARTS = [("e_arith_j", "arithmetic", "#1f618d"), ("e_hbm_j", "HBM", "#c0392b"),
                ("e_static_j", "static", "#95a5a6"), ("e_network_j", "network", "#7d3c98")]
PHASE_COLORS = {"fwd_gemm": "#1f618d", "fwd_elementwise": "#5dade2", "bwd_gemm": "#117a65",
                "bwd_elementwise": "#48c9b0", "forward": "#1f618d", "backward": "#117a65", "compute": "#1f618d",
                "allreduce": "#d68910", "allgather": "#f5b041", "reducescatter": "#a04000", "optimizer": "#b03a2e",
                "tp_comm": "#7d3c98", "cp_comm": "#af7ac5", "ep_comm": "#e74c3c", "pp_wait": "#808b96",
                "pp_send": "#2e4053", "wait": "#d5d8dc"}


def phase_order(name):
    """Phases in PHASE_COLORS's order; a kind a newer trace adds goes last, by name (never a crash)."""
    return (list(PHASE_COLORS).index(name), "") if name in PHASE_COLORS else (len(PHASE_COLORS), name)


def table5(t):
    s = t.summary
    print(f"{'scenario':40s} {'tok/step/GPU':>12s} {'ms/token':>9s} {'mJ/token':>9s} {'arith%':>7s} "
          f"{'HBM%':>6s} {'static%':>8s} {'I FLOP/B':>9s} {'slowdown':>9s}")
    print(f"{t.name[:40]:40s} {s['tokens_per_gpu']:12.0f} {s['ms_per_token']:9.3f} {s['mj_per_token']:9.3f} "
          f"{s['arith_pct']:7.1f} {s['hbm_pct']:6.1f} {s['static_pct']:8.1f} {s['intensity']:9.0f} "
          f"{s['slowdown']:9.2f}")


def breakdown(t):
    phases = t.by_phase()
    tiled = {k: v for k, v in phases.items() if not k.endswith("(overlapped)")}
    total_t = sum(v[0] for v in tiled.values())
    total_e = sum(v[1] for v in phases.values())
    print(f"\n{'phase':28s} {'GPU-seconds':>12s} {'time %':>7s} {'energy J':>12s} {'energy %':>8s}")
    for name, (sec, joules) in phases.items():
        share = f"{100 * sec / total_t:7.1f}" if name in tiled else f"{'-':>7s}"
        print(f"{name:28s} {sec:12.4f} {share} {joules:12.2f} {100 * joules / total_e:8.1f}")
    print("(time % of the GPUs' time; a collective on the compute stream is the time the GPUs waited for it)")
    comms = t.collectives()
    if comms:
        print(f"\n{'collective':16s} {'busy GPU-s':>11s} {'exposed GPU-s':>14s} {'exposed %':>10s} "
              f"{'% of GPU time':>14s} {'network J':>10s}")
        for name, (busy, exposed, joules) in comms.items():
            print(f"{name:16s} {busy:11.4f} {exposed:14.4f} {100 * exposed / busy if busy else 0:10.1f} "
                  f"{100 * exposed / total_t:14.1f} {joules:10.2f}")
    return phases


def energy_chart(t, path):
    phases = sorted(set(t.phase_label(v) for v in t.phases["phase"]), key=phase_order)
    fig, ax = plt.subplots(figsize=(max(8, 0.8 * len(phases) + 2), 4.8))
    bottom = np.zeros(len(phases))
    gpus = len(t.per_gpu)
    for column, label, color in ENERGY_PARTS:
        values = np.array([np.sum(t.phases[column][[t.phase_label(v) == p for v in t.phases["phase"]]])
                           for p in phases]) / gpus
        ax.bar(phases, values, bottom=bottom, label=label, color=color)
        bottom += values
    ax.set_ylabel("energy per GPU over the run [J]")
    ax.set_ylim(0, 1.1 * bottom.max())  # headroom over the tallest stack: nothing clipped
    ax.set_xlabel("phase")
    ax.set_title(figure_style.wrap(f"Where the joules go: {t.name}", 80), fontsize=10)
    ax.legend(title="energy")
    ax.grid(axis="y", alpha=0.3)
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
    fig.tight_layout()
    figure_style.save(fig, path)
    plt.close(fig)


def gantt_chart(t, path, max_gpus):
    fig, ax = plt.subplots(figsize=(11, 0.45 * min(max_gpus, len(t.per_gpu)) + 1.6))
    seen = set()
    shown = t.phases["gpu"] < max_gpus
    for row, stream in zip(t.phases[shown], t.stream[shown]):
        name = t.phase_label(row["phase"]) + (" (overlapped)" if stream else "")
        # The communication stream runs beside the compute: a thin bar under the GPU's own.
        y, height = (row["gpu"] + 0.4, 0.2) if stream else (row["gpu"] - 0.1, 0.6)
        ax.barh(y, (row["t_end_s"] - row["t_start_s"]) * 1e3, left=row["t_start_s"] * 1e3, height=height,
                color=PHASE_COLORS.get(name.split(" ")[0], "k"), label=None if name in seen else name, linewidth=0,
                hatch="//" if stream else None)
        seen.add(name)
    ax.set_xlabel("simulated time [ms]")
    ax.set_ylabel("GPU rank")
    ax.invert_yaxis()
    ax.set_title(figure_style.wrap(f"Timeline of the first {min(max_gpus, len(t.per_gpu))} GPUs: {t.name}", 90),
                 fontsize=10)
    ax.legend(title="phase", fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    figure_style.save(fig, path)
    plt.close(fig)


def main():
    p = figure_style.parser(__doc__)
    p.add_argument("trace", help="HDF5 trace (memwall run SCENARIO --trace TRACE.h5)")
    p.add_argument("--out-dir", default=None, help="folder for the two figures (default: the trace's)")
    p.add_argument("--gpus", type=int, default=8, help="GPUs in the Gantt chart")
    p.add_argument("--job", default=None, help="in a jobs file's trace: the job (name or index) to report")
    a = p.parse_args()
    t = Trace(a.trace, a.job)
    table5(t)
    breakdown(t)
    out_dir = a.out_dir or os.path.dirname(os.path.abspath(a.trace))
    os.makedirs(out_dir, exist_ok=True)  # --out-dir may name a folder that does not exist yet
    stem = os.path.splitext(os.path.basename(a.trace))[0]
    energy = os.path.join(out_dir, f"{stem}-energy.png")
    gantt = os.path.join(out_dir, f"{stem}-gantt.png")
    energy_chart(t, energy)
    gantt_chart(t, gantt, a.gpus)
    print(f"\nwrote {energy}\nwrote {gantt}")


if __name__ == "__main__":
    main()
