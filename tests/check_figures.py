#!/usr/bin/env python3
"""Every figure script on the shipped examples, checked on what it drew (analysis/figure_style.py
records it under MEMWALL_FIGURE_CHECK): the PNG's pixel size (read from its header), a title on
each panel or the figure, both axes labelled, every legend entry an artist that is drawn, tick
labels in plain numbers (no offset, no 'x10^'), names wrapped not cut (the whole scenario name in
the compare figure's tick labels).

Usage: check_figures.py MEMWALL REPO_ROOT [--keep DIR]   (--keep: copy the PNGs there, e.g. docs/figures)
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_plan import small_shipped_plan  # noqa: E402  the shrunk shipped plan, shared with its test

PY = "/usr/bin/python3"
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    expect(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    expect(p.returncode == 0, f"{' '.join(os.path.basename(c) for c in cmd[:3])}: exit {p.returncode}: "
                              f"{p.stderr.strip()[-400:]}")
    return p


def check_record(name, r, seed=False):
    w, h = png_size(r["path"])
    expect(300 <= w <= 8000 and 200 <= h <= 8000, f"{name}: {w} x {h} px")
    axes = [a for a in r["axes"] if a["visible"]]
    expect(axes, f"{name}: no axes")
    for i, a in enumerate(axes):
        where = f"{name} panel {i}"
        expect(a["title"] or r["suptitle"], f"{where}: no title")
        expect(a["xlabel"] and a["ylabel"], f"{where}: axes not labelled ({a['xlabel']!r}, {a['ylabel']!r})")
        missing = [e for e in a["legend"] if e not in a["drawn"]]
        expect(not missing, f"{where}: legend entries {missing} are not drawn (drawn: {a['drawn']})")
        if not seed:
            bad = [t for t in a["ticks"] if "10^" in t or "times" in t or "e+" in t or "\\mathdefault" in t]
            expect(not bad, f"{where}: tick labels {bad[:4]} are not plain numbers")
            expect(not any(a["offsets"]), f"{where}: axis offset text {a['offsets']}")
            for k, axis in enumerate(("xticks", "yticks")):  # an axis that reads: two numbers or names at least
                expect(len(a[axis]) >= 2 or a["shared"][k] or name in ("pipeline", "report") and axis == "yticks",
                       f"{where}: {axis[0]} axis shows {a[axis]}")
    return w, h


def main():
    memwall, root = sys.argv[1], os.path.abspath(sys.argv[2])
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    analysis = os.path.join(root, "analysis")
    scen = os.path.join(root, "scenarios")
    with tempfile.TemporaryDirectory() as tmp:
        check = os.path.join(tmp, "figures.json")
        env = dict(os.environ, MEMWALL_FIGURE_CHECK=check)
        out = lambda n: os.path.join(tmp, n)  # noqa: E731
        # Inputs: a sweep, a scale-out sweep, a small plan, traces (data-parallel, pipeline, what-ifs).
        run([memwall, "sweep", os.path.join(scen, "batch-squeeze.yaml"), "-j", "2", "--out", out("squeeze.csv")])
        run([memwall, "sweep", os.path.join(scen, "scale-out-study.yaml"), "-j", "2", "--out", out("scale-out.csv")])
        plan = out("plan.yaml")
        open(plan, "w").write(small_shipped_plan())
        run([memwall, "plan", plan, "-j", "2", "--out", out("plan.csv")])
        traces = {"ib64": os.path.join(scen, "worked-example", "4-ib-64.yaml"),
                  "pp": os.path.join(scen, "validation-megatron", "05-gpt-39p1b-512gpu.yaml"),
                  "hdr-ring": os.path.join(scen, "what-if", "2-hdr-flat-ring.yaml"),
                  "hdr-hier": os.path.join(scen, "what-if", "3-hdr-hierarchical.yaml")}
        for algo in ("ring", "tree", "auto"):
            run([memwall, "collbench", "dgx-h100-ndr", "--gpus", "16", "--algo", algo, "--out", out(f"cb-{algo}.csv")])
        goodput = out("goodput.yaml")  # a 64-GPU run with failures (tests/check_goodput.py's)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import check_goodput
        open(goodput, "w").write(check_goodput.SMALL)
        open(out("goodput.json"), "w").write(run([memwall, "run", goodput, "--json"]).stdout)
        jobs = sorted(glob.glob(os.path.join(scen, "what-if", "jobs-*.yaml")))
        open(out("jobs.json"), "w").write(run([memwall, "run", "--json"] + jobs).stdout)
        for name, scenario in traces.items():
            run([memwall, "run", scenario, "--trace", out(name + ".h5"), "--trace-level", "microbatch"])
        calls = {
            "squeeze": [os.path.join(analysis, "plot_squeeze.py"), out("squeeze.csv"), "--out", out("squeeze.png")],
            "scale-out": [os.path.join(analysis, "plot_scale_out.py"), out("scale-out.csv"), "--out",
                          out("scale-out.png")],
            "plan": [os.path.join(analysis, "plot_plan.py"), out("plan.csv"), "--out", out("plan.png"),
                     "--hbm-gb", "80"],
            "report": [os.path.join(analysis, "report.py"), out("ib64.h5"), "--out-dir", tmp],
            "pipeline": [os.path.join(analysis, "plot_pipeline.py"), out("pp.h5"), "--out", out("pipeline.png")],
            "power": [os.path.join(analysis, "plot_power.py"), out("ib64.h5"), "--out", out("power.png")],
            "compare": [os.path.join(analysis, "compare.py"), out("hdr-ring.h5"), out("hdr-hier.h5"), out("ib64.h5"),
                        "--out", out("compare.png")],
            # The trace scripts on a model-parallel run as well (report.py: tests/check_analysis.py).
            "compare-pipeline": [os.path.join(analysis, "compare.py"), out("ib64.h5"), out("pp.h5"), "--out",
                                 out("compare-pipeline.png")],
            "power-pipeline": [os.path.join(analysis, "plot_power.py"), out("pp.h5"), "--gpu", "256", "--out",
                               out("power-pipeline.png")],
            "collbench": [os.path.join(analysis, "plot_collbench.py"), out("cb-ring.csv"), out("cb-tree.csv"),
                          out("cb-auto.csv"), "--out", out("collbench.png")],
            "goodput": [os.path.join(analysis, "plot_goodput.py"), out("goodput.json"), "--out", out("goodput-small.png")],
            "jobs": [os.path.join(analysis, "plot_jobs.py"), out("jobs.json"), "--out", out("jobs.png")],
            "seed": [os.path.join(analysis, "seed_figure.py"), "--memwall", memwall, "--out", out("seed.png")],
            "validation": [os.path.join(analysis, "validation_table.py"), "--memwall", memwall, "--only",
                           "^(a100-0[1-4]|h100-0[1-3]|tt-)", "--max-error", "1", "--plot", out("validation-sample.png"),
                           os.path.join(scen, "validation")],
        }
        for name, cmd in calls.items():
            if os.path.exists(check):
                os.remove(check)
            run([PY] + cmd, env)
            records = json.load(open(check)) if os.path.exists(check) else []
            expect(records, f"{name}: no figure recorded (not saved through figure_style.save)")
            for r in records:
                w, h = check_record(name, r, seed=name == "seed")
                print(f"{name}: {os.path.basename(r['path'])} {w} x {h} px, {len(r['axes'])} panel(s): ok")
                if name.startswith("compare"):
                    names = [t for a in r["axes"] for t in a["ticks"]]
                    joined = " ".join(" ".join(n.split()) for n in names)
                    for scenario in (("hdr-ring", "hdr-hier", "ib64") if name == "compare" else ("ib64", "pp")):
                        import h5py
                        with h5py.File(out(scenario + ".h5")) as f:
                            full = f.attrs["scenario_name"]
                        full = full.decode() if isinstance(full, bytes) else full
                        expect(" ".join(full.split()) in joined, f"compare: '{full}' cut in the tick labels")
                if keep:
                    os.makedirs(keep, exist_ok=True)
                    shutil.copy(r["path"], os.path.join(keep, os.path.basename(r["path"])))
    if failures:
        sys.exit(f"{len(failures)} problem(s)")
    print("ok")


if __name__ == "__main__":
    main()
