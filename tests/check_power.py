#!/usr/bin/env python3
"""Node and facility power, the training-run projection, power in traces, in sweeps and plans, and the
energy validation. Every expectation is derived here from the README's formulas and the fabric's
structure, not from memwall's output.

Usage: check_power.py MEMWALL facility|trace|sweep|validation|activity [--skip PREFIX]
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis"))
import numpy as np  # noqa: E402
from trace_io import Trace  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
PY = "/usr/bin/python3"

# 64 H100s, 8 DGX servers on the rail-optimized NDR fabric, capped at 500 W.
SCENARIO = """
name: power check
gpu: {like: H100-SXM, power_limit: 500W}
model: {hidden: 2048, layers: 4, seq_len: 2048, vocab: 32000}
batch: {tokens_per_microbatch: 8192, microbatches: 2}
cluster: {gpus: 64, fabric: dgx-h100-ndr}
training: {overlap: bucketed}
power: {node: 1.7kW, switch_port: 15W, pue: 1.3}
run: {tokens: 15T}
cost: {gpu_hour: 2.5, kwh: 0.08, grid_carbon: 350}
"""

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(abs(a), abs(b), 1e-300)


def run_json(memwall, path, *extra):
    p = subprocess.run([memwall, "run", path, "--json", *extra], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"memwall run {path}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout.splitlines()[-1])


def check_facility(memwall, tmp):
    path = os.path.join(tmp, "power.yaml")
    with open(path, "w") as f:
        f.write(SCENARIO)
    j = run_json(memwall, path)
    # The fabric by hand (topologies/dgx-h100-ndr.yaml): 8 GPUs and 8 NICs per server; rail-optimized,
    # 32-port leaves: 8 rails x ceil(8 servers / 32) = 8 leaves, each with 32 uplinks to 32 spines.
    servers, nics, leaves, uplinks = 8, 64, 8, 32
    ports = nics + 2 * leaves * uplinks  # a NIC's leaf port, both ends of every leaf-spine link
    expect((j["servers"], j["nics"], j["switch_ports"]) == (servers, nics, ports),
           f"inventory {j['servers']}, {j['nics']}, {j['switch_ports']} != {servers}, {nics}, {ports}")
    step, gpus = j["step_time_s"], 64
    gpu_j = (j["e_arith_j"] + j["e_hbm_j"] + j["e_static_j"]) * gpus
    node_j = gpu_j + 1700 * servers * step
    it_j = node_j + 15 * ports * step + j["e_network_j"] * gpus
    facility_j = 1.3 * it_j
    tokens = 8192 * 2 * gpus
    expect(close(j["node_j_per_step"], node_j), f"node J {j['node_j_per_step']} != {node_j}")
    expect(close(j["facility_j_per_step"], facility_j), f"facility J {j['facility_j_per_step']} != {facility_j}")
    expect(close(j["facility_mj_per_token"], 1e3 * facility_j / tokens), "facility mJ/token")
    expect(close(j["node_power_mean_w"], node_j / servers / step), "node mean power")
    expect(close(j["facility_power_mean_w"], facility_j / step), "facility mean power")
    # Under the 500 W cap no phase draws more; a server's peak is its 8 GPUs' peak plus the host.
    expect(j["gpu_power_peak_w"] <= 500 * (1 + 1e-9), f"GPU peak {j['gpu_power_peak_w']} W over the 500 W cap")
    expect(j["gpu_clock_min"] < 1, "the cap never bit (expected on the H100's seed GEMMs)")
    expect(close(j["node_power_peak_w"], 8 * j["gpu_power_peak_w"] + 1700), "node peak power")
    # The run: whole steps for 15T tokens; days, GPU-hours, facility MWh, money, carbon.
    steps = math.ceil(15e12 / tokens)
    kwh = steps * facility_j / 3.6e6
    expect(j["run_steps"] == steps, f"run steps {j['run_steps']} != {steps}")
    expect(close(j["run_days"], steps * step / 86400), "run days")
    expect(close(j["run_gpu_hours"], gpus * steps * step / 3600), "GPU-hours")
    expect(close(j["run_facility_mwh"], kwh / 1000), "facility MWh")
    expect(close(j["run_cost"], 2.5 * gpus * steps * step / 3600 + 0.08 * kwh), "cost")
    expect(close(j["run_co2_t"], kwh * 350 / 1e6), "carbon")
    # Catalog servers (model/servers.yaml, components summed by hand): a fabric node holding 18 GB200
    # trays counts 18 of them; a DGX A100's supplies divide its node power by 0.95.
    for gpu, fabric, server, host_w, psu in (("GB200", "gb200-nvl72", "gb200-nvl72-tray", 18 * 1150.0, 0.95),
                                             ("A100-80GB", "dgx-a100-hdr", "dgx-a100", 2216.0, 0.95)):
        other = os.path.join(tmp, f"{server}.yaml")
        with open(other, "w") as f:
            f.write(SCENARIO.replace("H100-SXM", gpu).replace("dgx-h100-ndr", fabric).replace("gpus: 64", "gpus: 72" if
                    "gb200" in fabric else "gpus: 16").replace("node: 1.7kW", f"server: {server}"))
        k = run_json(memwall, other)
        expect(close(k["host_w_per_node"], host_w) and k["psu_efficiency"] == psu and k["server"] == server,
               f"{server}: host {k['host_w_per_node']} W, PSU {k['psu_efficiency']}")
        n = 72 if "gb200" in fabric else 16
        node_j = ((k["e_arith_j"] + k["e_hbm_j"] + k["e_static_j"]) * n + host_w * k["servers"] * k["step_time_s"] +
                  0) / psu
        expect(close(k["node_j_per_step"], node_j, 1e-9), f"{server}: node J {k['node_j_per_step']} != {node_j}")
    print(f"facility: {j['facility_power_mean_w'] / 1e3:.1f} kW, run {j['run_days']:.1f} days, "
          f"{j['run_facility_mwh']:.1f} MWh, cost {j['run_cost']:.0f}, {j['run_co2_t']:.1f} t CO2e")


def check_trace(memwall, tmp):
    path = os.path.join(tmp, "power.yaml")
    with open(path, "w") as f:
        f.write(SCENARIO.replace("gpus: 64", "gpus: 16"))
    h5, timeline = os.path.join(tmp, "p.h5"), os.path.join(tmp, "p.json")
    p = subprocess.run([memwall, "run", path, "--trace", h5, "--timeline", timeline], capture_output=True, text=True)
    expect(p.returncode == 0, f"traced run failed: {p.stderr}")
    t = Trace(h5)
    pw = t.power
    # Energy is conserved: each GPU's power integrated over time is its arithmetic + HBM + static joules.
    for g in range(16):
        mine = pw[pw["gpu"] == g]
        integral = float(np.sum(mine["power_w"] * (mine["t_end_s"] - mine["t_start_s"])))
        row = t.per_gpu[t.per_gpu["gpu"] == g][0]
        expect(close(integral, row["e_arith_j"] + row["e_hbm_j"] + row["e_static_j"], 1e-9),
               f"GPU {g}: integral of power {integral} J != its joules")
        # and its power rows tile the run: no gap, no overlap
        mine = mine[mine["t_start_s"].argsort()]
        expect(np.allclose(mine["t_start_s"][1:], mine["t_end_s"][:-1], rtol=0, atol=1e-12), f"GPU {g}: gaps")
    expect(close(float(pw["power_w"].max()), t.summary["gpu_power_peak_w"], 1e-9), "peak power in the trace")
    check_server_series(t, 16)
    expect(close(float(pw["clock"].min()), t.summary["gpu_clock_min"], 1e-12), "lowest clock in the trace")
    expect(float(pw["power_w"].max()) <= 500 * (1 + 1e-9), "a trace row over the cap")
    with open(timeline) as f:
        events = json.load(f)["traceEvents"]
    counters = [e for e in events if e.get("ph") == "C"]
    expect(len(counters) == len(pw), f"{len(counters)} Perfetto counter events != {len(pw)} power rows")
    png = os.path.join(tmp, "power.png")
    p = subprocess.run([PY, os.path.join(ROOT, "analysis", "plot_power.py"), h5, "--out", png, "--gpu", "3"],
                       capture_output=True, text=True)
    expect(p.returncode == 0 and os.path.getsize(png) > 10000, f"plot_power.py: {p.stderr}")
    # Its server and job series integrate to the step's node energy: their means are the summary's.
    import re
    found = re.findall(r"(server|job) ([0-9.]+) kW peak, ([0-9.]+) kW mean", p.stdout)
    servers = t.summary["servers"]
    for label, peak_kw, mean_kw in found:
        n = 1 if label == "server" else servers
        expect(abs(float(mean_kw) - n * t.summary["node_power_mean_w"] / 1e3) <= 0.006 * n,
               f"plot_power.py: {label} mean {mean_kw} kW != {n} x {t.summary['node_power_mean_w'] / 1e3:.3f} kW")
        expect(float(peak_kw) <= n * t.summary["node_power_peak_w"] / 1e3 + 0.006 * n,
               f"plot_power.py: {label} peak {peak_kw} kW over the bound {t.summary['node_power_peak_w']}")
    expect(len(found) == 2, f"plot_power.py printed no server and job figures: {p.stdout!r}")
    print(f"trace: {len(pw)} power rows, energy conserved on 16 GPUs, {len(counters)} counter events")


def check_server_series(t, gpus):
    """/power_servers and /power_job tile the run and integrate to the node energy derived by hand."""
    servers, makespan = int(t.summary["servers"]), float(t.summary["makespan_s"])
    host = t.summary["host_w_per_node"] + t.summary.get("nic_w", 0.0)
    psu = t.summary.get("psu_efficiency", 1.0)
    row_j = lambda r: float(np.sum(r["power_w"] * (r["t_end_s"] - r["t_start_s"])))  # noqa: E731
    gpu_j = float(np.sum(t.per_gpu["e_arith_j"] + t.per_gpu["e_hbm_j"] + t.per_gpu["e_static_j"]))
    node_j = (gpu_j + host * servers * makespan) / psu
    job = t.power_job[np.argsort(t.power_job["t_start_s"], kind="stable")]
    expect(close(row_j(job), node_j, 1e-9), f"/power_job integrates to {row_j(job)} J, not {node_j}")
    expect(close(float(job["t_start_s"][0]), 0.0) and close(float(job["t_end_s"][-1]), makespan, 1e-12) and
           np.allclose(job["t_start_s"][1:], job["t_end_s"][:-1], rtol=0, atol=1e-12), "/power_job does not tile the run")
    per_server = sum(row_j(t.power_servers[t.power_servers["server"] == k]) for k in range(servers))
    expect(close(per_server, node_j, 1e-9), f"/power_servers sum to {per_server} J, not {node_j}")
    expect(float(job["power_w"].max()) <= servers * t.summary["node_power_peak_w"] * (1 + 1e-9),
           "the job's peak over the servers' bound")


SWEEP = "scenario:\n" + "".join("  " + line + "\n" for line in SCENARIO.replace("gpus: 64", "gpus: 16").strip().splitlines()) + """
sweep:
  gpu.power_limit: [none, 600W, 450W, 350W]
"""


def check_sweep(memwall, tmp):
    path, out = os.path.join(tmp, "sweep.yaml"), os.path.join(tmp, "sweep.csv")
    with open(path, "w") as f:
        f.write(SWEEP)
    p = subprocess.run([memwall, "sweep", path, "--out", out], capture_output=True, text=True)
    expect(p.returncode == 0, f"sweep failed: {p.stderr}")
    with open(out) as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["point"]))
    days = [float(r["run_days"]) for r in rows]
    peak = [float(r["gpu_power_peak_w"]) for r in rows]
    # A lower cap: a slower run, never a higher peak; each capped peak at or under its cap.
    expect(all(a <= b * (1 + 1e-12) for a, b in zip(days, days[1:])), f"run days not rising as the cap drops: {days}")
    expect(days[-1] > days[0] * 1.05, f"a 350 W cap barely changed the run: {days}")
    for cap, w in zip([600, 450, 350], peak[1:]):
        expect(w <= cap * (1 + 1e-9), f"peak {w} W over the {cap} W cap")
    expect(all(float(r["run_facility_mwh"]) > 0 for r in rows), "sweep rows without the run's MWh")
    print("sweep: run days by cap none/600/450/350 W:", " ".join(f"{d:.1f}" for d in days))


def check_validation(memwall, tmp):
    folder = os.path.join(ROOT, "scenarios", "validation-energy")
    skip = sys.argv[sys.argv.index("--skip") + 1] if "--skip" in sys.argv else None
    files = sorted(f for f in os.listdir(folder) if f.endswith(".yaml") and not (skip and f.startswith(skip)))
    expect(len(files) >= 2, "fewer than two energy validation scenarios")
    for name in files:
        j = run_json(memwall, os.path.join(folder, name))
        expect("measured_source" in j, f"{name}: no measured source")
        for key in ("node_power_peak_w", "node_power_mean_w"):
            measured = j.get("measured_" + key)
            if measured is None:
                continue
            error = j[key] / measured - 1
            print(f"{name}: {key} modelled {j[key] / 1e3:.2f} kW, measured {measured / 1e3:.2f} kW, "
                  f"error {100 * error:+.1f}%")
            # Issue 30's bounds: the two node figures the project started from (01, 02) within 15%,
            # the figures added after them within 20% (docs/validation.md reports every row).
            bound = 0.15 if name[:2] in ("01", "02") else 0.20
            expect(abs(error) < bound, f"{name}: {key} off by {100 * error:+.1f}%, bound {100 * bound:.0f}%")


# The activity power model (model/gpus.yaml): 130 W awake (90 static + 40 clocked), 192 W busy SMs.
ACTIVITY = """
name: activity check
gpu: {like: H100-SXM-calibrated, power_limit: LIMIT}
model: {hidden: 2048, layers: 8, seq_len: 2048, vocab: 32000}
batch: {global_batch: 32, micro_batch: 2}
cluster: {gpus: 16, fabric: dgx-h100-ndr}
parallelism: {pipeline: 2}
power: {server: dgx-h100, pue: 1.2}
"""


def check_activity(memwall, tmp):
    """Derived by hand from the documented constants, against the seed's per-FLOP model on the same run."""
    traces = {}
    for label, limit, model in (("act", "none", "activity"), ("flop", "none", "per_flop"), ("cap", "450W", "activity")):
        path, h5 = os.path.join(tmp, label + ".yaml"), os.path.join(tmp, label + ".h5")
        with open(path, "w") as f:
            f.write(ACTIVITY.replace("LIMIT", limit).replace("calibrated,", f"calibrated, power_model: {model},"))
        p = subprocess.run([memwall, "run", path, "--trace", h5, "--json"], capture_output=True, text=True)
        expect(p.returncode == 0, f"{label}: exit {p.returncode}: {p.stderr}")
        traces[label] = (Trace(h5), json.loads(p.stdout.splitlines()[-1]))
    (act, ja), (flop, jf), (cap, jc) = traces["act"], traces["flop"], traces["cap"]
    # Uncapped, power does not move time: the same phases at the same times in both models.
    expect(np.array_equal(act.phases["t_start_s"], flop.phases["t_start_s"]), "activity changed the timeline")
    busy = (act.phases["flops"] > 0) | (act.phases["hbm_bytes"] > 0)
    span = act.phases["t_end_s"] - act.phases["t_start_s"]
    # A kernel's phase draws p_active (192 W at full clock) more than the seed's per-FLOP energy...
    expect(np.allclose(act.phases["e_arith_j"][busy], flop.phases["e_arith_j"][busy] + 192.0 * span[busy],
                       rtol=1e-12, atol=1e-12), "busy phases: e_arith != per-FLOP + 192 W x span")
    # ... and every second on the compute stream is awake: 130 W static in activity, 90 W per FLOP.
    on_compute = act.stream == 0
    expect(np.allclose(act.phases["e_static_j"][on_compute], 130.0 * span[on_compute], rtol=1e-12, atol=1e-15),
           "static energy != 130 W x span")
    expect(np.allclose(flop.phases["e_static_j"][on_compute], 90.0 * span[on_compute], rtol=1e-12, atol=1e-15),
           "per_flop static energy != 90 W x span")
    # An idle wait (a pipeline bubble, an exposed collective) draws exactly the awake power.
    pw = act.power
    idle = [r for r in pw if close(float(r["power_w"]), 130.0, 1e-12)]
    expect(len(idle) > 0 and float(pw["power_w"].min()) >= 130.0 * (1 - 1e-12),
           f"no wait at 130 W, or a row below it: min {float(pw['power_w'].min())} W")
    # Energy conserved per GPU and per step: the power rows integrate to the GPU's joules.
    for t, j in ((act, ja), (cap, jc)):
        for g in range(16):
            mine = t.power[t.power["gpu"] == g]
            integral = float(np.sum(mine["power_w"] * (mine["t_end_s"] - mine["t_start_s"])))
            row = t.per_gpu[t.per_gpu["gpu"] == g][0]
            expect(close(integral, row["e_arith_j"] + row["e_hbm_j"] + row["e_static_j"], 1e-9),
                   f"GPU {g}: power integral {integral} J != its joules")
        check_server_series(t, 16)
        gpu_j = (j["e_arith_j"] + j["e_hbm_j"] + j["e_static_j"]) * 16
        host = 2580.0  # model/servers.yaml dgx-h100: 700 + 320 + 250 + 400 + 650 + 110 + 150 W
        node_j = (gpu_j + host * 2 * j["step_time_s"]) / 0.95
        expect(close(j["node_j_per_step"], node_j, 1e-9), f"node J {j['node_j_per_step']} != {node_j}")
        expect(close(j["facility_j_per_step"], 1.2 * (node_j + j["e_network_j"] * 16), 1e-9), "facility J")
    # With a cap: no row, and so no step's mean, above it; the cap slowed the step.
    expect(float(cap.power["power_w"].max()) <= 450 * (1 + 1e-9), "a capped row over 450 W")
    expect(jc["gpu_power_mean_w"] <= 450 and jc["step_time_s"] > ja["step_time_s"], "cap: mean or time")
    print(f"activity: mean GPU power {ja['gpu_power_mean_w']:.0f} W (per FLOP {jf['gpu_power_mean_w']:.0f} W), "
          f"capped at 450 W: {jc['gpu_power_mean_w']:.0f} W, {len(idle)} idle rows at 130 W")


def main():
    memwall, mode = sys.argv[1], sys.argv[2]
    checks = {"facility": check_facility, "trace": check_trace, "sweep": check_sweep, "validation": check_validation,
              "activity": check_activity}
    with tempfile.TemporaryDirectory() as tmp:
        checks[mode](memwall, tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
