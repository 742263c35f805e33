#!/usr/bin/env python3
"""The pipeline schedule of one step of a model-parallel run, from its HDF5 trace: one row per pipeline
stage (its first GPU: TP rank 0 of data-parallel replica 0), forwards and backwards coloured by
micro-batch and labelled with it, waits for the neighbouring stage (the bubble) blank, TP collectives,
the data-parallel gradient sync and the optimizer in their own colours.

Usage: plot_pipeline.py TRACE.h5 [--out pipeline.png] [--step 0]
The trace comes from `memwall run SCENARIO --trace TRACE.h5` (any trace level; `layer` or
`microbatch` show the micro-batches).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402
from trace_io import Trace  # noqa: E402

FORWARD = {"fwd_gemm", "fwd_elementwise", "forward"}
BACKWARD = {"bwd_gemm", "bwd_elementwise", "backward"}
OTHER_COLOURS = {"tp_comm": "#f39c12", "allreduce": "#c0392b", "reducescatter": "#c0392b", "allgather": "#e74c3c",
                 "optimizer": "#8e44ad", "compute": "#7f8c8d"}
LEGEND_NAMES = {"tp_comm": "TP collectives", "allreduce": "DP all-reduce / reduce-scatter",
                "reducescatter": "DP all-reduce / reduce-scatter", "allgather": "DP all-gather",
                "optimizer": "optimizer", "compute": "other compute"}


def stage_gpus(layout):
    """Rank of (tensor 0, context 0, data 0, stage s) for each stage, from the placement order."""
    degree = {"tensor": layout["tensor"], "context": layout["context"], "expert": 1, "data": layout["data"],
              "pipeline": layout["pipeline"]}
    stride, strides = 1, {}
    for axis in layout["placement"]:
        strides[axis] = stride
        stride *= degree[axis]
    return [s * strides["pipeline"] for s in range(layout["pipeline"])]


def blocks(rows, names):
    """Merge a micro-batch's consecutive rows (its layers and the TP collectives between them) into one
    forward or backward block; other rows (data-parallel sync, optimizer) stay their own blocks."""
    out = []
    for r in rows:
        kind = names[int(r["phase"])]
        mb, start, end = int(r["microbatch"]), float(r["t_start_s"]), float(r["t_end_s"])
        group = "F" if kind in FORWARD else "B" if kind in BACKWARD else kind
        joins = out and abs(start - out[-1][3]) < 1e-12 and out[-1][1] == mb
        if joins and (group == out[-1][0] or (group == "tp_comm" and out[-1][0] in ("F", "B"))):
            out[-1][3] = end
        elif joins and out[-1][0] == "tp_comm" and group in ("F", "B"):  # after the embedding's collective
            out[-1][0], out[-1][3] = group, end
        else:
            out.append([group, mb, start, end])
    return out


def main():
    p = figure_style.parser(__doc__)
    p.add_argument("trace", help="HDF5 trace of a model-parallel run")
    figure_style.add_out(p, "pipeline.png")
    p.add_argument("--step", type=int, default=0, help="the optimizer step to draw (default 0)")
    a = p.parse_args()
    t = Trace(a.trace)
    if "parallelism" not in t.attrs:
        raise SystemExit(f"{a.trace}: not a model-parallel run (no 'parallelism' attribute); nothing to draw")
    layout = json.loads(t.attrs["parallelism"])
    plt = figure_style.plt
    cmap = plt.get_cmap("tab20")
    labelled = set()
    gpus = stage_gpus(layout)
    fig, ax = plt.subplots(figsize=(12, 0.5 * len(gpus) + 2.2))
    compute = t.phases[(t.stream == 0) & (t.phases["step"] == a.step)]
    for row, gpu in enumerate(gpus):
        mine = compute[compute["gpu"] == gpu]
        mine = mine[mine["t_start_s"].argsort(kind="stable")]
        for group, mb, start, end in blocks(mine, t.phase_names):
            if group in ("F", "B"):
                colour = cmap((2 * mb + (0 if group == "F" else 1)) % 20)
                ax.barh(row, end - start, left=start, color=colour, edgecolor="black", linewidth=0.2)
                if mb >= 0 and end - start > 0.008 * (compute["t_end_s"].max() - compute["t_start_s"].min()):
                    ax.text((start + end) / 2, row, f"{group}{mb}", ha="center", va="center", fontsize=6)
            elif group in OTHER_COLOURS:
                name = LEGEND_NAMES[group]  # each kind labelled once: the legend lists what is drawn
                ax.barh(row, end - start, left=start, color=OTHER_COLOURS[group], linewidth=0,
                        label=None if name in labelled else name)
                labelled.add(name)
    ax.set_yticks(range(len(gpus)), [f"stage {s} (GPU {g})" for s, g in enumerate(gpus)])
    ax.invert_yaxis()
    schedule = layout["schedule"] + (f", v = {layout['virtual_stages']}" if layout["virtual_stages"] > 1 else "")
    ax.set(xlabel="simulated time [s]", ylabel="pipeline stage",
           title=figure_style.wrap(f"{t.name}: TP {layout['tensor']}, PP {layout['pipeline']}, DP {layout['data']}, "
                                   f"{schedule}", 100))
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=3,  # below the x label
              title="F<m> / B<m>: forward / backward of micro-batch m (with its TP collectives); blank: waiting",
              title_fontsize=7)
    fig.tight_layout()
    figure_style.save(fig, a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
