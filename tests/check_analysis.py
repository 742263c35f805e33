#!/usr/bin/env python3
"""The analysis scripts as a user runs them: `--help` on every analysis/*.py script exits 0, and the
plot scripts draw from a sweep's results written as CSV and as HDF5, which load to the same rows
(every number equal, the text columns equal). The pipeline figure draws from a model-parallel trace
in which every stage shows each micro-batch's forward and backward once (1F1B, 4 stages, 8
micro-batches), and refuses a data-parallel trace with a message. report.py runs on data-parallel,
pipeline and expert-parallel traces, whose compute-stream rows tile GPUs x makespan.

Usage: check_analysis.py MEMWALL REPO_ROOT
"""
import math
import os
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"


def main():
    memwall, root = sys.argv[1], os.path.abspath(sys.argv[2])
    analysis = os.path.join(root, "analysis")
    sys.path.insert(0, analysis)
    import sweep_csv

    failures = []
    for script in sorted(os.listdir(analysis)):
        if not script.endswith(".py") or script in ("sweep_csv.py", "trace_io.py", "figure_style.py"):  # modules
            continue
        run = subprocess.run([PY, os.path.join(analysis, script), "--help"], capture_output=True, text=True)
        if run.returncode != 0 or "usage" not in run.stdout.lower():
            failures.append(f"{script} --help: exit {run.returncode}: {run.stderr.strip()[-300:]}")
        # The whole description, not its first line cut mid-sentence: every word of the docstring.
        import ast
        doc = ast.get_docstring(ast.parse(open(os.path.join(analysis, script)).read())) or ""
        if " ".join(doc.split()) not in " ".join(run.stdout.split()):
            failures.append(f"{script} --help does not print its whole description")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for ext in ("csv", "h5"):
            out = os.path.join(tmp, "squeeze." + ext)
            run = subprocess.run([memwall, "sweep", os.path.join(root, "scenarios", "batch-squeeze.yaml"), "-j", "2",
                                  "--out", out], capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"sweep --out {out}: exit {run.returncode}: {run.stderr}")
            results[ext] = sweep_csv.load(out)
            for plot in ("plot_squeeze.py", "plot_scale_out.py"):
                png = os.path.join(tmp, f"{plot}.{ext}.png")
                run = subprocess.run([PY, os.path.join(analysis, plot), out, "--out", png], capture_output=True,
                                     text=True)
                if run.returncode != 0 or not os.path.getsize(png) > 1000:
                    failures.append(f"{plot} {out}: exit {run.returncode}: {run.stderr.strip()[-300:]}")
        csv_rows, h5_rows = results["csv"], results["h5"]
        if not csv_rows or len(csv_rows) != len(h5_rows):
            failures.append(f"{len(csv_rows)} CSV rows, {len(h5_rows)} HDF5 rows")
        for a, b in zip(csv_rows, h5_rows):
            for key, value in a.items():
                other = b.get(key)
                same = (isinstance(value, float) and isinstance(other, float)
                        and (value == other or (math.isnan(value) and math.isnan(other)))) or value == other
                if not same and not (value == "" and isinstance(other, float) and math.isnan(other)):
                    failures.append(f"point {a.get('point')}: {key} is {value!r} in CSV, {other!r} in HDF5")
        print(f"{len(csv_rows)} points from CSV and HDF5 agree; plots drawn from both")
        missing = subprocess.run([PY, os.path.join(analysis, "plot_squeeze.py"), os.path.join(tmp, "none.h5"),
                                  "--out", os.path.join(tmp, "x.png")], capture_output=True, text=True)
        if missing.returncode != 2 or "none.h5" not in missing.stderr:
            failures.append(f"a missing results file: exit {missing.returncode}, {missing.stderr.strip()}")
        failures += check_pipeline_figure(memwall, analysis, tmp)
    if failures:
        sys.exit("\n".join(failures[:20]))


PIPELINE = """gpu: A100-80GB
model: {hidden: 1024, layers: 8, seq_len: 1024}
batch: {global_batch: 8, micro_batch: 1}
cluster: {gpus: 8, fabric: {kind: star, bandwidth: 100GB/s, latency: 1us}}
parallelism: {tensor: 2, pipeline: 4}
training: {sharding: none}
"""


def check_pipeline_figure(memwall, analysis, tmp):
    import plot_pipeline
    from trace_io import Trace
    failures = []
    scenario, trace, png = (os.path.join(tmp, n) for n in ("pp.yaml", "pp.h5", "pp.png"))
    open(scenario, "w").write(PIPELINE)
    run = subprocess.run([memwall, "run", scenario, "--trace", trace], capture_output=True, text=True)
    if run.returncode != 0:
        return [f"memwall run --trace (pipeline): {run.stderr.strip()}"]
    t = Trace(trace)
    import json
    layout = json.loads(t.attrs["parallelism"])
    gpus = plot_pipeline.stage_gpus(layout)
    if gpus != [0, 2, 4, 6]:
        failures.append(f"stage GPUs {gpus}, expected [0, 2, 4, 6] (TP 2 innermost)")
    compute = t.phases[t.stream == 0]
    for stage, gpu in enumerate(gpus):
        mine = compute[compute["gpu"] == gpu]
        mine = mine[mine["t_start_s"].argsort(kind="stable")]
        seen = sorted((g, mb) for g, mb, _, _ in plot_pipeline.blocks(mine, t.phase_names) if g in ("F", "B"))
        if seen != sorted([("F", m) for m in range(8)] + [("B", m) for m in range(8)]):
            failures.append(f"stage {stage}: forward/backward blocks {seen}")
    run = subprocess.run([PY, os.path.join(analysis, "plot_pipeline.py"), trace, "--out", png], capture_output=True,
                         text=True)
    if run.returncode != 0 or not os.path.getsize(png) > 1000:
        failures.append(f"plot_pipeline.py: exit {run.returncode}: {run.stderr.strip()[-300:]}")
    dp_trace = os.path.join(tmp, "dp.h5")
    open(scenario, "w").write(PIPELINE.replace("parallelism: {tensor: 2, pipeline: 4}\n", ""))
    subprocess.run([memwall, "run", scenario, "--trace", dp_trace], capture_output=True, check=True)
    run = subprocess.run([PY, os.path.join(analysis, "plot_pipeline.py"), dp_trace], capture_output=True, text=True)
    if run.returncode == 0 or "not a model-parallel run" not in run.stderr:
        failures.append(f"plot_pipeline.py on a data-parallel trace: exit {run.returncode}, {run.stderr.strip()}")
    print(f"pipeline figure: {len(gpus)} stages, each micro-batch's forward and backward once")
    # report.py on every kind of trace (once a ValueError on 'tp_comm' for any model-parallel one),
    # and the compute stream's rows tile each GPU's whole run: GPUs x makespan in all.
    open(scenario, "w").write(PIPELINE.replace("model: {hidden: 1024, layers: 8, seq_len: 1024}",
                                               "model: {hidden: 1024, layers: 8, seq_len: 1024, moe: {experts: 4, "
                                               "top_k: 2, expert_ffn_hidden: 2048}}").replace(
        "{tensor: 2, pipeline: 4}", "{tensor: 2, pipeline: 2, expert: 2}"))
    moe_trace = os.path.join(tmp, "moe.h5")
    subprocess.run([memwall, "run", scenario, "--trace", moe_trace], capture_output=True, check=True)
    for path in (trace, dp_trace, moe_trace):
        out_dir = os.path.join(tmp, "report-" + os.path.basename(path))
        run = subprocess.run([PY, os.path.join(analysis, "report.py"), path, "--out-dir", out_dir],
                             capture_output=True, text=True)
        stem = os.path.splitext(os.path.basename(path))[0]
        if run.returncode != 0 or not all(os.path.getsize(os.path.join(out_dir, f"{stem}-{k}.png")) > 1000
                                          for k in ("energy", "gantt")):
            failures.append(f"report.py {os.path.basename(path)}: exit {run.returncode}: {run.stderr.strip()[-300:]}")
        t = Trace(path)
        rows = t.phases[t.stream == 0]
        tiled = float((rows["t_end_s"] - rows["t_start_s"]).sum())
        want = len(t.per_gpu) * float(t.summary["makespan_s"])
        if abs(tiled / want - 1) > 1e-9:
            failures.append(f"{os.path.basename(path)}: compute-stream rows cover {tiled} GPU-s, GPUs x makespan {want}")
    print("report.py on pipeline, data-parallel and expert-parallel traces; compute-stream rows tile the run")
    return failures


if __name__ == "__main__":
    main()
