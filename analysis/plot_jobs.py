#!/usr/bin/env python3
"""Several jobs on one fabric (issue 32): each job's slowdown (step time together / alone on the same
servers) by placement, one group of bars per jobs file (fabric and placement), and beside it the
cluster's tokens/s per file. Reads `memwall run --json` of jobs files (one JSON object per line,
several files or lines).

Usage: plot_jobs.py RESULT.json [...] [--out jobs.png]
   memwall run --json scenarios/what-if/jobs-*.yaml > jobs.json
   plot_jobs.py jobs.json --out jobs.png
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402


def read(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.strip():
                    record = json.loads(line)
                    if "jobs" in record and "cluster" in record:
                        runs.append(record)
    if not runs:
        raise SystemExit(f"{', '.join(paths)}: no jobs-file result (memwall run --json JOBS.yaml)")
    return runs


def main():
    p = figure_style.parser(__doc__)
    p.add_argument("results", nargs="+", help="memwall run --json output of jobs files")
    figure_style.add_out(p, "jobs.png")
    a = p.parse_args()
    runs = read(a.results)
    plt = figure_style.plt
    fig, (ax_s, ax_t) = plt.subplots(1, 2, figsize=(13, 4.6), gridspec_kw={"width_ratios": [2.2, 1]})
    fig.suptitle("Several jobs on one fabric: slowdown against running alone, by placement", fontsize=10)
    names = []
    for run in runs:
        for j in run["jobs"]:
            if j["job"] not in names:
                names.append(j["job"])
    width = 0.8 / len(runs)
    colours = plt.cm.tab10.colors
    for k, run in enumerate(runs):
        by_name = {j["job"]: j for j in run["jobs"]}
        xs = [i + (k - (len(runs) - 1) / 2) * width for i, n in enumerate(names) if n in by_name]
        ys = [by_name[n]["slowdown"] for n in names if n in by_name]
        ax_s.bar(xs, ys, width * 0.95, color=colours[k % len(colours)], label=figure_style.wrap(run["name"], 40))
    ax_s.axhline(1.0, color="#555555", linewidth=0.8, linestyle="--")
    ax_s.set_xticks(range(len(names)))
    ax_s.set_xticklabels([figure_style.wrap(n, 14) for n in names])
    ax_s.set(xlabel="job", ylabel="step time together / alone", title="per-job slowdown")
    ax_s.set_ylim(0, max(1.1, max(j["slowdown"] for r in runs for j in r["jobs"])) * 1.45)  # room for the legend
    ax_s.legend(fontsize=7, loc="upper left", ncol=2)
    figure_style.plain_ticks(ax_s)
    ax_t.bar(range(len(runs)), [r["cluster"]["tokens_per_s"] for r in runs],
             color=[colours[k % len(colours)] for k in range(len(runs))])
    ax_t.set_xticks(range(len(runs)))
    ax_t.set_xticklabels([figure_style.wrap(r["name"], 13) for r in runs], fontsize=7)
    ax_t.set(xlabel="jobs file", ylabel="tokens/s, all jobs", title="cluster throughput")
    figure_style.plain_ticks(ax_t)
    fig.tight_layout()
    figure_style.save(fig, a.out)


if __name__ == "__main__":
    main()
