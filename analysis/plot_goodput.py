#!/usr/bin/env python3
"""Goodput over a whole run (issue 31), from `memwall run --json` of a scenario with `reliability:` and
`checkpoint:`: goodput (effective training time) against the checkpoint interval, with Young's
optimum and the interval used marked; against the job's size (every per-device failure count scaled
with the GPUs, the step time as simulated: weak scaling); and its distribution over seeds (days to
train for a run given in tokens or steps, goodput for a run given as a duration).

Usage: plot_goodput.py RESULT.json [--out goodput.png]
   memwall run scenarios/goodput/llama3-405b-16k.yaml --json > llama3.json
   plot_goodput.py llama3.json --out goodput.png
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402


def main():
    p = figure_style.parser(__doc__)
    p.add_argument("result", help="memwall run --json output (one record or a list: the first with goodput)")
    figure_style.add_out(p, "goodput.png")
    a = p.parse_args()
    with open(a.result) as f:
        data = json.load(f)
    records = data if isinstance(data, list) else [data]
    record = next((r for r in records if "goodput_detail" in r), None)
    if record is None:
        raise SystemExit(f"{a.result}: no record with goodput (the scenario needs reliability: and checkpoint:)")
    g = record["goodput_detail"]
    plt = figure_style.plt
    fig, (ax_i, ax_n, ax_d) = plt.subplots(1, 3, figsize=(14, 4.4))
    fig.suptitle(figure_style.wrap(f"{record['name']}: {record['gpus']} GPUs, step {record['step_time_s']:.3g} s, "
                                   f"{g['seeds']} seeds", 120), fontsize=10)

    pts = g["curve_interval"]
    if pts:
        ax_i.plot([q["interval_s"] / 60 for q in pts], [100 * q["goodput"] for q in pts], "o-", color="#2c3e50",
                  label="goodput (mean over seeds)")
        used_s = g["checkpoint_interval_steps"] * record["step_time_s"]  # whole steps
        ax_i.axvline(used_s / 60, color="#c0392b", linestyle="--", linewidth=0.9,
                     label=f"interval used: {g['checkpoint_interval_steps']:.0f} steps, {used_s / 60:.3g} min")
        if g["young_interval_s"] > 0:
            ax_i.axvline(g["young_interval_s"] / 60, color="#16a085", linestyle=":", linewidth=1.2,
                         label=f"Young sqrt(2CM): {g['young_interval_s'] / 60:.3g} min")
        ax_i.set_xscale("log")
        ax_i.legend(fontsize=7, loc="lower center")
    ax_i.set(xlabel="checkpoint interval [min of training]", ylabel="effective training time [%]",
             title=f"checkpoint ({g['checkpoint_mode']}, {g['checkpoint_bytes'] / 1e12:.3g} TB)")

    pts = g["curve_gpus"]
    ax_n.plot([q["gpus"] for q in pts], [100 * q["goodput"] for q in pts], "o-", color="#8e44ad",
              label="goodput, Young's interval at each size" if g["checkpoint_interval_optimal"]
              else f"goodput, checkpoint every {g['checkpoint_interval_s'] / 60:.3g} min")
    ax_n.axvline(record["gpus"], color="#c0392b", linestyle="--", linewidth=0.9, label=f"this job: {record['gpus']}")
    ax_n.set_xscale("log")
    ax_n.legend(fontsize=7, loc="lower left")
    ax_n.set(xlabel="GPUs (failures per device as given)", ylabel="effective training time [%]",
             title="job size (weak scaling)")

    by_days = max(g["days"]) > min(g["days"]) + 1e-9
    values = g["days"] if by_days else [100 * x for x in g["goodput_seeds"]]
    ax_d.hist(values, bins=30, color="#2980b9", label=f"{len(values)} seeds")
    ax_d.legend(fontsize=7)
    ax_d.set(xlabel="days to train" if by_days else "effective training time [%]", ylabel="seeds",
             title=f"over seeds: {g['interruptions_mean']:.0f} interruptions on average")
    for ax in (ax_i, ax_n, ax_d):
        figure_style.plain_ticks(ax)
    fig.tight_layout()
    figure_style.save(fig, a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
