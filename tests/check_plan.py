#!/usr/bin/env python3
"""`memwall plan`, checked against independent runs.

Usage: check_plan.py MEMWALL megatron [--only REGEX] | shards | bad | precheck | user-fabric | objective

megatron: each plan of scenarios/plan-megatron (a Megatron-LM SC'21 Table 1 row's model, GPUs and
  global batch; search over TP, PP, interleaving, micro-batch). The best simulated layout must be at
  least as fast as the published layout (scenarios/validation-megatron), simulated on its own with
  `memwall run`. Then Spearman's rank correlation between the estimate and the simulation, computed
  here from the results files, over all simulated candidates of the searches (pooled) and per search;
  the pooled value and the mean of the per-search values must be >= 0.9.
shards: a plan run whole, and as two shards merged with `memwall merge`, give the same results file
  value for value; --resume reruns nothing; --write-best writes a scenario that `memwall run` runs at
  the best layout's throughput; analysis/plot_plan.py draws the figure.
bad: bad plan files exit 2 naming file, line and key, and write nothing.
precheck: the layouts a search drops before building anything are those `validate` refuses, and why.
user-fabric: a plan over a catalog fabric and a user's fabric file (see user_fabric).
objective: `--objective energy` ranks each fabric's simulated layouts by facility energy per token (from
  the results file), names the fastest (least step time) and the most frugal (least mJ/token) with
  their run's MWh as derived here; `--objective cost` without cost: exits 2.
"""
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def rows(path):
    return list(csv.DictReader(open(path)))


def spearman(a, b):
    def ranks(x):
        order = sorted(range(len(x)), key=lambda i: x[i])
        r = [0.0] * len(x)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    n = len(a)
    mean = (n + 1) / 2
    sab = sum((x - mean) * (y - mean) for x, y in zip(ra, rb))
    saa = sum((x - mean) ** 2 for x in ra)
    sbb = sum((y - mean) ** 2 for y in rb)
    return sab / (saa * sbb) ** 0.5 if saa > 0 and sbb > 0 else float("nan")


def run_json(memwall, scenario):
    p = subprocess.run([memwall, "run", "--json", scenario], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"memwall run {scenario}: {p.stderr}")
    return json.loads(p.stdout)


def megatron(memwall, tmp, only):
    plans = sorted(f for f in os.listdir(os.path.join(ROOT, "scenarios", "plan-megatron")) if f.endswith(".yaml"))
    plans = [f for f in plans if re.search(only, f)]
    if not plans:
        fail(f"no plan matches {only}")
    est_all, sim_all, per_search = [], [], []
    print(f"{'row':32} {'published layout':28} {'sim tok/s':>10} {'best layout (plan)':44} {'sim tok/s':>10} "
          f"{'gain':>6} {'rho':>6}")
    for name in plans:
        plan = os.path.join(ROOT, "scenarios", "plan-megatron", name)
        out = os.path.join(tmp, name.replace(".yaml", ".csv"))
        p = subprocess.run([memwall, "plan", plan, "-j", "2", "--out", out], capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"memwall plan {name} exited {p.returncode}: {p.stderr[-2000:]}")
        r = [x for x in rows(out) if x["status"] == "ok"]
        if not r:
            fail(f"{name}: no simulated layout")
        for x in r:
            if float(x["footprint_bytes"]) > 85100068864:  # an A100 80GB as CUDA reports it
                fail(f"{name}: reported layout {x['layout']} needs {float(x['footprint_bytes']) / 1e9:.1f} GB > 85.1 GB")
        best = max(r, key=lambda x: float(x["tokens_per_s_per_gpu"]))
        published = run_json(memwall, os.path.join(ROOT, "scenarios", "validation-megatron", name))
        pub_tps = published["tokens_per_s_per_gpu"]
        best_tps = float(best["tokens_per_s_per_gpu"])
        est = [float(x["estimate_step_s"]) for x in r]
        sim = [float(x["step_time_s"]) for x in r]
        rho = spearman(est, sim)
        per_search.append(rho)
        est_all += est
        sim_all += sim
        layout = published["parallelism"] if "parallelism" in published else {"tensor": 1, "pipeline": 1,
                                                                               "virtual_stages": 1}
        pub_text = f"TP {layout['tensor']} PP {layout['pipeline']} v{layout['virtual_stages']}"
        print(f"{name[:32]:32} {pub_text:28} {pub_tps:10.1f} {best['layout'][:44]:44} {best_tps:10.1f} "
              f"{100 * (best_tps / pub_tps - 1):+5.1f}% {rho:6.3f}")
        if best_tps < pub_tps * (1 - 1e-9):
            fail(f"{name}: the plan's best {best['layout']} ({best_tps:.2f} tokens/s/GPU) is slower than the "
                 f"published layout simulated the same way ({pub_tps:.2f})")
    pooled = spearman(est_all, sim_all)
    valid = [x for x in per_search if x == x]
    mean = sum(valid) / len(valid) if valid else float("nan")
    print(f"Spearman rank correlation, estimate vs simulation: pooled {pooled:.3f} over {len(est_all)} simulated "
          f"layouts of {len(plans)} searches; per search min {min(valid):.3f}, mean {mean:.3f}")
    if not pooled >= 0.9 or not mean >= 0.9:
        fail("the estimate does not rank layouts like the simulation (Spearman < 0.9)")


SMALL_PLAN = """
name: "small plan"
base: {base}
fabrics: [dgx-a100-hdr, fat-tree-4to1]
search:
  tensor: [1, 2, 4]
  pipeline: [1, 2]
  virtual_stages: [1, 3]
  micro_batch: [4, 16]
top: 3
"""


def shards(memwall, tmp):
    plan = os.path.join(tmp, "plan.yaml")
    open(plan, "w").write(SMALL_PLAN.format(
        base=os.path.join(ROOT, "scenarios", "validation-megatron", "02-gpt-3p6b-64gpu.yaml")))
    whole = os.path.join(tmp, "whole.csv")
    best_dir = os.path.join(tmp, "best")
    p = subprocess.run([memwall, "plan", plan, "-j", "2", "--out", whole, "--write-best", best_dir],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"plan exited {p.returncode}: {p.stderr}")
    if "slower than" not in p.stdout:
        fail(f"no verdict between the two fabrics:\n{p.stdout}")
    parts = []
    for k in (1, 2):
        part = os.path.join(tmp, f"shard{k}.h5")
        q = subprocess.run([memwall, "plan", plan, "--shard", f"{k}/2", "--out", part], capture_output=True, text=True)
        if q.returncode != 0:
            fail(f"shard {k}/2 exited {q.returncode}: {q.stderr}")
        parts.append(part)
    merged = os.path.join(tmp, "merged.csv")
    q = subprocess.run([memwall, "merge", "--out", merged, *parts], capture_output=True, text=True)
    if q.returncode != 0:
        fail(f"merge exited {q.returncode}: {q.stderr}")
    a, b = rows(whole), rows(merged)
    if len(a) != 6 or [x["status"] for x in a] != ["ok"] * 6:
        fail(f"expected 6 simulated layouts (3 per fabric), got {[(x['point'], x['status']) for x in a]}")
    for x, y in zip(a, b):
        for k in x:
            if x[k] != y[k] and not (x[k] and y[k] and float(x[k]) == float(y[k])):
                fail(f"point {x['point']} column {k}: whole {x[k]!r}, merged shards {y[k]!r}")
    print(f"two shards merged = the whole plan: {len(a)} layouts x {len(a[0])} columns, value for value")
    q = subprocess.run([memwall, "plan", plan, "--resume", "--out", whole], capture_output=True, text=True)
    if q.returncode != 0 or "simulating 0 layout(s)" not in q.stderr:
        fail(f"--resume on a complete plan simulated again: {q.stderr}")
    for fabric in ("dgx-a100-hdr", "fat-tree-4to1"):
        scenario = os.path.join(best_dir, fabric + ".yaml")
        if not os.path.exists(scenario):
            fail(f"--write-best did not write {scenario}")
        best = max((x for x in a if x["fabric"] == fabric), key=lambda x: float(x["tokens_per_s_per_gpu"]))
        got = run_json(memwall, scenario)["tokens_per_s_per_gpu"]
        if abs(got / float(best["tokens_per_s_per_gpu"]) - 1) > 1e-9:
            fail(f"{scenario} runs at {got} tokens/s/GPU, the plan's best on {fabric} was {best['tokens_per_s_per_gpu']}")
    print("--write-best scenarios run at the best layouts' throughput")
    png = os.path.join(tmp, "plan.png")
    q = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "analysis", "plot_plan.py"), merged, "--out", png],
                       capture_output=True, text=True)
    if q.returncode != 0 or not os.path.getsize(png) > 10000:
        fail(f"plot_plan.py: {q.stderr}")


BAD = {
    "empty-range.yaml": ("base: {base}\nsearch:\n  tensor: [1, 2]\n  micro_batch: []\n", 4, "search.micro_batch",
                         "empty"),
    "unknown-key.yaml": ("base: {base}\nsearch:\n  tensor: [1, 2]\n  tenser: [1]\n", 4, "search.tenser",
                         "unknown search key"),
    "bad-fabric.yaml": ("base: {base}\nfabrics: [dgx-a100-hdr, nope-fabric]\nsearch:\n  tensor: [1, 2]\n", 2,
                        "fabrics[1]", "unknown fabric"),
    "bad-model.yaml": ("base: {base}\nmodel: {{like: gpt-9}}\nsearch:\n  tensor: [1, 2]\n", 2, "model.like",
                       "unknown model"),
    "bad-value.yaml": ("base: {base}\nsearch:\n  activation_recompute: [none, sometimes]\n", 3,
                       "search.activation_recompute", "sometimes"),
    # A fabric entry that loads but cannot hold the cluster: its own line in the plan, not the first
    # fabric's line (an inline torus) or the base scenario's (a catalog torus).
    "small-inline-fabric.yaml": ("base: {base}\nfabrics:\n  - dgx-a100-hdr\n  - {{kind: torus, dims: [2, 2, 2], "
                                 "bandwidth: 45GB/s, latency: 1us}}\nsearch:\n  tensor: [1, 2]\n", 4, "fabrics[1]",
                                 "the torus dimensions hold 8 GPUs"),
    "small-catalog-fabric.yaml": ("base: {base32}\nfabrics:\n  - dgx-a100-hdr\n  - tpu-v4-torus\nsearch:\n"
                                  "  tensor: [1, 2]\n", 4, "fabrics[1]", "tpu-v4-torus"),
    # Six axes of 1,500 values: the count overflowed to a negative number that passed the limit.
    "overflowing-grid.yaml": ("base: {base}\nsearch:\n" + "".join(
        f"  {k}: [{', '.join(str(v) for v in range(1, 1501))}]\n"
        for k in ("tensor", "pipeline", "context", "expert", "micro_batch", "virtual_stages")), 3, "search",
        "over the limit of 1000000"),
    "nothing-fits.yaml": ("base: {big}\ncluster: {{gpus: 64}}\nbatch: {{global_batch: 64, micro_batch: 1}}\n"
                          "search:\n  tensor: [4, 8]\n  pipeline: [1, 2, 4, 8]\n", 5, "search",
                          "closest, TP 8 PP 8"),
}


def user_fabric(memwall, tmp):
    """A plan over a catalog fabric and a user's own file (a copy of it with 800 Gb/s NICs): once
    `internal error: unordered_map::at` (issue 33). Both fabrics simulated; the faster NICs never
    slower on any layout, strictly faster where data-parallel rings cross servers; each row equals a
    plain `memwall run` of its layout on its fabric."""
    mine = os.path.join(tmp, "my-xdr.yaml")
    text = open(os.path.join(ROOT, "topologies", "dgx-h100-ndr.yaml")).read()
    open(mine, "w").write(text.replace("400Gb/s", "800Gb/s").replace('name: "DGX H100 + NDR InfiniBand"',
                                                                      'name: "DGX H100 + XDR"'))
    plan = os.path.join(tmp, "plan.yaml")
    open(plan, "w").write("""name: "catalog fabric and a user file"
base:
  gpu: H100-SXM-calibrated
  model: {like: llama3-8b, seq_len: 8192}
  training: {sharding: zero1}
cluster: {gpus: 64}
batch: {global_batch: 64}
fabrics: [dgx-h100-ndr, my-xdr.yaml]
search:
  tensor: [1, 2]
  micro_batch: [1]
top: 2
""")
    out = os.path.join(tmp, "fabrics.csv")
    best_dir = os.path.join(tmp, "best-fabrics")
    p = subprocess.run([memwall, "plan", plan, "--out", out, "--write-best", best_dir], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"plan over a catalog fabric and a user file exited {p.returncode}: {p.stderr}")
    r = rows(out)
    by = {(x["fabric"], x["layout"]): float(x["tokens_per_s_per_gpu"]) for x in r if x["status"] == "ok"}
    layouts = sorted({x["layout"] for x in r})
    if len(by) != 4 or len(layouts) != 2:
        fail(f"expected 2 layouts on each of 2 fabrics, got {sorted(by)}")
    for layout in layouts:
        a, b = by[("dgx-h100-ndr", layout)], by[("my-xdr.yaml", layout)]
        if b < a * (1 - 1e-12):
            fail(f"{layout}: 800 Gb/s NICs slower than 400 Gb/s ({b} < {a})")
        if layout.startswith("TP 1 ") and not b > a:
            fail(f"{layout}: a ring over 8 servers not faster with 800 Gb/s NICs ({b} vs {a})")
    for label, fabric in (("dgx-h100-ndr", "dgx-h100-ndr"), ("my-xdr", "my-xdr.yaml")):
        scenario = os.path.join(best_dir, label + ".yaml")
        best = max(v for (f, _), v in by.items() if f == fabric)
        got = run_json(memwall, scenario)["tokens_per_s_per_gpu"]
        if abs(got / best - 1) > 1e-9:
            fail(f"{scenario} runs at {got} tokens/s/GPU, the plan's best on {fabric} was {best}")
    print(f"plan over dgx-h100-ndr and a user file: {len(by)} layouts simulated, {p.stdout.splitlines()[-1]}")
    # A plan or a sweep given to `memwall run`: the command that takes it, at the file's key (once
    # "base: unknown key"); `validate` checks a plan file as a plan.
    squeeze = os.path.join(ROOT, "scenarios", "batch-squeeze.yaml")
    sweep_line = next(i for i, l in enumerate(open(squeeze), 1) if l.startswith("sweep:")) + 1  # its block's line
    for path, key, line, command in ((plan, "base", 3, "memwall plan"),
                                     (squeeze, "sweep", sweep_line, "memwall sweep")):
        q = subprocess.run([memwall, "run", path], capture_output=True, text=True)
        if q.returncode != 2 or f"{path}:{line}: {key}: " not in q.stderr or command not in q.stderr or q.stdout:
            fail(f"memwall run {path}: exit {q.returncode}, {q.stderr!r}: expected exit 2 at {key} pointing to {command}")
    q = subprocess.run([memwall, "validate", plan], capture_output=True, text=True)
    if q.returncode != 0 or "ok (plan of 2 layouts on 2 fabric(s)" not in q.stdout:
        fail(f"memwall validate on a plan file: exit {q.returncode}: {q.stdout!r} {q.stderr!r}")


def bad(memwall, tmp):
    base = os.path.join(ROOT, "scenarios", "validation-megatron", "02-gpt-3p6b-64gpu.yaml")
    big = os.path.join(ROOT, "scenarios", "validation-megatron", "10-gpt-1008p0b-3072gpu.yaml")
    base32 = os.path.join(ROOT, "scenarios", "validation-megatron", "01-gpt-1p7b-32gpu.yaml")
    for name, (text, line, key, words) in BAD.items():
        path = os.path.join(tmp, name)
        open(path, "w").write(text.format(base=base, big=big, base32=base32))
        out = os.path.join(tmp, name + ".csv")
        p = subprocess.run([memwall, "plan", path, "--out", out, "--write-best", os.path.join(tmp, "best-" + name)],
                           capture_output=True, text=True)
        where = f"{path}:{line}: {key}"
        if p.returncode != 2 or where not in p.stderr or words not in p.stderr:
            fail(f"{name}: exit {p.returncode}, expected 2 with '{where}' and '{words}':\n{p.stderr}")
        if os.path.exists(out) or os.path.exists(os.path.join(tmp, "best-" + name)):
            fail(f"{name}: something was written")
        print(f"{name}: exit 2, {where}")
    # The smallest shortfall is stated with its numbers.
    if not re.search(r"needs [0-9.]+ GB per GPU, [0-9.]+ GB more than the 85\.1 GB usable", p.stderr):
        fail(f"nothing-fits: no shortfall figures: {p.stderr}")


def precheck(memwall, tmp):
    """The layouts `plan` drops before building anything are those `memwall validate` refuses, for the
    same reasons: every layout of a small grid validated on its own, the refusals counted by key and
    reason (numbers as N), against the plan's counts."""
    base = os.path.join(ROOT, "scenarios", "validation-megatron", "01-gpt-1p7b-32gpu.yaml")
    grid = {"tensor": [1, 2, 3, 8], "pipeline": [1, 2, 5], "virtual_stages": [1, 2, 5], "micro_batch": [16, 3],
            "sharding": ["none", "zero3"]}
    plan = os.path.join(tmp, "grid.yaml")
    open(plan, "w").write(f"base: {base}\nsearch:\n" + "".join(f"  {k}: {v}\n".replace("'", "") for k, v in grid.items()) +
                          "top: 1\n")
    p = subprocess.run([memwall, "plan", plan, "--out", os.path.join(tmp, "grid.csv")], capture_output=True, text=True)
    m = re.search(r"dgx-a100-hdr: (\d+) layouts, (\d+) break a constraint", p.stderr)
    if p.returncode != 0 or not m:
        fail(f"precheck: plan exit {p.returncode}: {p.stderr[-500:]}")
        return
    printed = {r: int(n) for n, r in re.findall(r"(?m)^memwall:   (\d+) x (.*)$", p.stderr)}
    text = open(base).read()
    refused = {}
    import itertools
    for values in itertools.product(*grid.values()):
        v = dict(zip(grid, values))
        scenario = re.sub(r"(?m)^batch: .*$", f"batch: {{global_batch: 512, micro_batch: {v['micro_batch']}}}", text)
        scenario = re.sub(r"(?m)^training: .*$", f"training: {{sharding: {v['sharding']}, activation_recompute: full}}",
                          scenario)
        scenario += (f"parallelism: {{tensor: {v['tensor']}, pipeline: {v['pipeline']}, "
                     f"virtual_stages: {v['virtual_stages']}}}\n")
        path = os.path.join(tmp, "layout.yaml")
        open(path, "w").write(scenario)
        q = subprocess.run([memwall, "validate", path], capture_output=True, text=True)
        if q.returncode == 0 or "does not fit in memory" in q.stderr:
            continue
        err = re.match(r"memwall: error: [^:]+:\d+: ([\w.]+): (.*)$", q.stderr.strip())
        if not err:
            fail(f"precheck: {v}: unexpected error {q.stderr!r}")
            continue
        kind = err.group(1) + ": " + re.sub(r"\d[\d.]*", "N", err.group(2))
        refused[kind] = refused.get(kind, 0) + 1
    total = 1
    for values in grid.values():
        total *= len(values)
    if int(m.group(1)) != total or int(m.group(2)) != sum(refused.values()):
        fail(f"precheck: plan counts {m.group(2)} of {m.group(1)} broken, validate refuses {sum(refused.values())} "
             f"of {total}")
    for reason, n in printed.items():
        if refused.get(reason) != n:
            fail(f"precheck: plan counts {n} x {reason!r}, validate {refused.get(reason)} (validate: {refused})")
    print(f"precheck: {sum(refused.values())} of {total} layouts refused, {len(refused)} reasons, "
          f"{len(printed)} printed by plan and matched")


def small_shipped_plan():
    """The shipped Llama 3 70B plan, shrunk to seconds: Llama 3 8B on 64 GPUs, 6 layouts per fabric."""
    return (open(os.path.join(ROOT, "scenarios", "plan", "llama3-70b-1024-h100.yaml")).read()
            .replace("cluster: {gpus: 1024}", "cluster: {gpus: 64}")
            .replace("model: {like: llama3-70b, seq_len: 8192}", "model: {like: llama3-8b, seq_len: 8192}")
            .replace("global_batch: 1024", "global_batch: 64")
            .replace("pipeline: [1, 2, 4, 8, 16]", "pipeline: [1, 2]")
            .replace("virtual_stages: [1, 2, 5]", "virtual_stages: [1, 2]")
            .replace("top: 4", "top: 6"))


def objective(memwall, tmp):
    plan = os.path.join(tmp, "plan.yaml")
    open(plan, "w").write(small_shipped_plan())
    out = os.path.join(tmp, "energy.csv")
    p = subprocess.run([memwall, "plan", plan, "-j", "2", "--objective", "energy", "--out", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"plan --objective energy exited {p.returncode}: {p.stderr}")
    table = [r for r in rows(out) if r["status"] == "ok"]
    for fabric in ("dgx-h100-ndr", "fat-tree-2to1"):
        mine = [r for r in table if r["fabric"] == fabric]
        if len(mine) < 2:
            fail(f"{fabric}: {len(mine)} simulated layouts")
        section = p.stdout.split(f"on {fabric}:", 1)[1]
        printed = re.findall(r"^\s+\d+ (.+?)\s{2,}\d", section, re.M)[:len(mine)]
        energy = {r["layout"]: float(r["facility_mj_per_token"]) for r in mine}
        ranked = [energy[layout.strip()] for layout in printed]
        if ranked != sorted(ranked):
            fail(f"{fabric}: table not ranked by facility mJ/token: {ranked}")
        fastest = min(mine, key=lambda r: float(r["step_time_s"]))
        frugal = min(mine, key=lambda r: float(r["facility_mj_per_token"]))
        for label, r in (("fastest", fastest), ("most frugal", frugal)):
            # The run's MWh by hand: whole steps for 15T tokens, each the facility's joules of a step.
            tokens_per_step = 64 * float(r["tokens_per_gpu"])
            mwh = math.ceil(15e12 / tokens_per_step) * float(r["facility_mj_per_token"]) * 1e-3 * tokens_per_step / 3.6e9
            line = re.search(rf"^\s+{label}\s+(.+?): step .*?, ([0-9.]+) MWh", section, re.M)
            if not line or line.group(1) != r["layout"] or abs(float(line.group(2)) / mwh - 1) > 1e-3:
                fail(f"{fabric}: {label} line {line.group(0) if line else None!r}, expected {r['layout']}, {mwh:.1f} MWh")
        print(f"{fabric}: {len(mine)} layouts ranked by energy, {ranked[0]:.1f} to {ranked[-1]:.1f} mJ/token")
    # Ranking by cost needs prices.
    cheap = os.path.join(tmp, "no-cost.yaml")
    open(cheap, "w").write(open(plan).read().replace("  cost: {gpu_hour: 2.50, kwh: 0.08}\n", ""))
    p = subprocess.run([memwall, "plan", cheap, "--objective", "cost"], capture_output=True, text=True)
    if p.returncode != 2 or "--objective" not in p.stderr:
        fail(f"--objective cost without cost: exit {p.returncode}: {p.stderr}")


def main():
    memwall, mode = sys.argv[1], sys.argv[2]
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    with tempfile.TemporaryDirectory() as tmp:
        {"megatron": lambda: megatron(memwall, tmp, only), "shards": lambda: shards(memwall, tmp),
         "bad": lambda: bad(memwall, tmp), "precheck": lambda: precheck(memwall, tmp),
         "user-fabric": lambda: user_fabric(memwall, tmp), "objective": lambda: objective(memwall, tmp)}[mode]()
    print("ok")


if __name__ == "__main__":
    main()
