#!/usr/bin/env python3
"""Power over time for one step, from an HDF5 trace: one GPU's power (each compute phase's joules
over its duration), its server's (the server's GPUs summed, plus the scenario's host power per node,
over the power supplies' efficiency) and the whole job's (every server), with the GPU's power limit
drawn, the intervals where the cap lowered the clock shaded, and the peak-to-mean ratios printed;
and a histogram of GPU power over the step (time-weighted, all GPUs).

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


def summed_power(power, gpus, base_w, start, end):
    """The power of a set of GPUs (None: all) plus base_w, as a step function (edges, watts at each
    edge until the next): each row adds its watts at its start and removes them at its end."""
    keep = (power["t_end_s"] > start) & (power["t_start_s"] < end)
    if gpus is not None:
        keep &= np.isin(power["gpu"], gpus)
    rows = power[keep]
    times = np.concatenate([np.clip(rows["t_start_s"], start, end), np.clip(rows["t_end_s"], start, end)])
    deltas = np.concatenate([rows["power_w"], -rows["power_w"]])
    order = np.argsort(times, kind="stable")
    edges, first = np.unique(times[order], return_index=True)
    level = np.cumsum(deltas[order])
    last = np.append(first[1:], len(order)) - 1  # the level after every change at that instant
    return edges, base_w + level[last]


def time_mean(edges, watts):
    spans = np.diff(edges)
    return float(np.sum(watts[:-1] * spans) / np.sum(spans)) if np.sum(spans) > 0 else 0.0


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
    host_w = float(t.summary.get("host_w_per_node", 0.0))
    psu = float(t.summary.get("psu_efficiency", 1.0)) or 1.0
    edges, node_w = summed_power(t.power, list(range(first, first + per_server)), host_w, start, end)
    node_w = node_w / psu
    if t.power_job is not None:  # the trace's own series (memwall >= issue 30)
        rows = t.power_job[(t.power_job["t_end_s"] > start) & (t.power_job["t_start_s"] < end)]
        job_edges = np.append(np.maximum(rows["t_start_s"], start), min(float(rows["t_end_s"][-1]), end))
        job_w = np.append(rows["power_w"], rows["power_w"][-1:])
    else:
        job_edges, job_w = summed_power(t.power, None, host_w * servers, start, end)
        job_w = job_w / psu
    plt = figure_style.plt
    fig = plt.figure(figsize=(11, 10))
    grid = fig.add_gridspec(4, 1)
    ax_gpu = fig.add_subplot(grid[0])
    ax_node = fig.add_subplot(grid[1], sharex=ax_gpu)
    ax_job = fig.add_subplot(grid[2], sharex=ax_gpu)
    ax_hist = fig.add_subplot(grid[3])
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
    ratios = []
    for label, e, w in (("server", edges, node_w), ("job", job_edges, job_w)):
        mean = time_mean(e, w)
        ratios.append(f"{label} {w[:-1].max() / 1e3:.2f} kW peak, {mean / 1e3:.2f} kW mean, "
                      f"peak-to-mean {w[:-1].max() / mean:.3f}" if mean > 0 else f"{label}: no power rows")
    ax_job.step(job_edges, job_w / 1e3, where="post", color="#8e44ad", linewidth=0.9,
                label=f"all {servers} servers (hosts included)")
    ax_job.set(xlabel="simulated time [s]", ylabel="job power [kW]", title="the whole job: " + ratios[1])
    ax_job.set_ylim(bottom=0)
    ax_job.legend(fontsize=7, loc="lower right")
    rows = t.power[(t.power["t_end_s"] > start) & (t.power["t_start_s"] < end)]
    spans = np.minimum(rows["t_end_s"], end) - np.maximum(rows["t_start_s"], start)
    ax_hist.hist(rows["power_w"], bins=40, weights=spans / max(float(np.sum(spans)), 1e-300) * 100,
                 color="#2c3e50", label=f"{gpus} GPUs, step {a.step}")
    ax_hist.set(xlabel="GPU power [W]", ylabel="share of GPU time [%]", title="GPU power over the step")
    ax_hist.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    figure_style.save(fig, a.out)
    print(f"wrote {a.out}; " + "; ".join(ratios))


if __name__ == "__main__":
    main()
