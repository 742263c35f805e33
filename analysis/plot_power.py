#!/usr/bin/env python3
"""Power over time for one step, from an HDF5 trace: one GPU's power (each compute phase's joules
over its duration) and its server's (the server's GPUs summed, plus the scenario's host power per node),
with the GPU's power limit and board power drawn, and the intervals where the cap lowered the clock
shaded.

Usage: plot_power.py TRACE.h5 [--out power.png] [--gpu 0] [--step 0]
The trace comes from `memwall run SCENARIO --trace TRACE.h5` (trace level `layer` shows each layer's
phases; coarser levels average them).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402
from trace_io import Trace  # noqa: E402


def step_window(t, step):
    """[start, end] of a step on the compute stream, over all GPUs."""
    rows = t.phases[(t.stream == 0) & (t.phases["step"] == step)]
    if len(rows) == 0:
        raise SystemExit(f"{t.path}: no step {step} in the trace")
    return float(rows["t_start_s"].min()), float(rows["t_end_s"].max())


def series(power, gpu, start, end):
    """(times, watts, clock) of a GPU's power rows inside [start, end], as a step function."""
    rows = power[(power["gpu"] == gpu) & (power["t_end_s"] > start) & (power["t_start_s"] < end)]
    return rows[rows["t_start_s"].argsort(kind="stable")]


def node_power(power, gpus, host_w, start, end):
    """A server's power as a step function: host power plus each of its GPUs' power at every instant
    where any of them changes."""
    rows = power[np.isin(power["gpu"], gpus) & (power["t_end_s"] > start) & (power["t_start_s"] < end)]
    edges = np.unique(np.clip(np.concatenate([rows["t_start_s"], rows["t_end_s"]]), start, end))
    watts = np.full(len(edges), host_w, dtype=float)
    for r in rows:
        inside = (edges >= r["t_start_s"]) & (edges < r["t_end_s"])
        watts[inside] += r["power_w"]
    return edges, watts


def main():
    p = figure_style.parser(__doc__)
    p.add_argument("trace", help="HDF5 trace (memwall run SCENARIO --trace TRACE.h5)")
    figure_style.add_out(p, "power.png")
    p.add_argument("--gpu", type=int, default=0, help="the GPU to draw, and its server (default 0)")
    p.add_argument("--step", type=int, default=0, help="the optimizer step to draw (default 0)")
    a = p.parse_args()
    t = Trace(a.trace)
    if t.power is None:
        raise SystemExit(f"{a.trace}: no /power table (a trace from an older memwall); run the scenario again")
    start, end = step_window(t, a.step)
    gpus = int(t.summary.get("gpus", 1))
    servers = max(1, int(t.summary.get("servers", gpus)))
    per_server = max(1, gpus // servers)
    first = (a.gpu // per_server) * per_server
    mine = series(t.power, a.gpu, start, end)
    edges, node_w = node_power(t.power, list(range(first, first + per_server)),
                               float(t.summary.get("host_w_per_node", 0.0)), start, end)
    plt = figure_style.plt
    fig, (ax_gpu, ax_node) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    x = np.append(mine["t_start_s"], mine["t_end_s"][-1:]) if len(mine) else np.array([start, end])
    y = np.append(mine["power_w"], mine["power_w"][-1:]) if len(mine) else np.zeros(2)
    ax_gpu.step(x, y, where="post", color="#2c3e50", linewidth=0.9, label=f"GPU {a.gpu}")
    for r in mine[mine["clock"] < 1]:
        ax_gpu.axvspan(r["t_start_s"], r["t_end_s"], color="#e67e22", alpha=0.25, linewidth=0)
    limit = float(t.summary.get("power_limit_w", 0.0))
    if limit > 0:
        ax_gpu.axhline(limit, color="#c0392b", linestyle="--", linewidth=0.8, label=f"power limit {limit:.0f} W")
    ax_gpu.set(ylabel="GPU power [W]", xlabel="simulated time [s]",
               title=f"{t.name}: step {a.step}" + (" (shaded: clock lowered by the cap)" if limit > 0 else ""))
    ax_gpu.set_ylim(bottom=0)
    ax_gpu.legend(fontsize=7, loc="lower right")
    ax_node.step(edges, node_w / 1e3, where="post", color="#16a085", linewidth=0.9,
                 label=f"server of GPUs {first}-{first + per_server - 1} (host included)")
    ax_node.set(xlabel="simulated time [s]", ylabel="server power [kW]", title="its server")
    ax_node.set_ylim(bottom=0)
    ax_node.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    figure_style.save(fig, a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
