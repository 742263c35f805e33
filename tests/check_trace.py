#!/usr/bin/env python3
"""Traces: conservation laws on a simulated trace (also when a link fails mid-run and messages resend
their rest over another route), and no file left by a failed or killed run.

Usage: check_trace.py MEMWALL conservation|reroute|interrupted
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis"))
import numpy as np  # noqa: E402
from trace_io import Trace  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

SCENARIO = """
name: trace check
gpu: H100-SXM
model: {hidden: 1024, layers: 3, seq_len: 512, vocab: 1000}
batch: {tokens_per_microbatch: 512, microbatches: MB}
cluster:
  gpus: GPUS
  fabric: {kind: star, bandwidth: 20GB/s, latency: 2us, pj_per_bit: 7, gpu_links: [{gpu: 1, bandwidth: 5GB/s}]}
steps: STEPS
"""

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def rel_close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(abs(a), abs(b))


def write(tmp, gpus=6, mb=2, steps=2):
    path = os.path.join(tmp, "s.yaml")
    open(path, "w").write(SCENARIO.replace("GPUS", str(gpus)).replace("MB", str(mb)).replace("STEPS", str(steps)))
    return path


def conservation(memwall, tmp):
    gpus, mb, steps, layers = 6, 2, 2, 3
    scenario = write(tmp, gpus, mb, steps)
    # Per step after the micro-batches: zero1 (the default, Megatron-Core's distributed optimizer)
    # reduce-scatters the gradients, updates its shard, all-gathers the parameters: 3 rows.
    for level, per_step_rows in (("layer", mb * 4 * layers + 3), ("microbatch", mb * 2 + 3), ("step", 4)):
        check_conservation(memwall, tmp, scenario, level, gpus, steps, per_step_rows)
    # With overlap (DDP buckets; FSDP prefetch and per-layer reduce-scatter) the collectives run on a
    # communication stream beside the compute: once, their static energy was counted twice.
    for training, kinds in (("{sharding: none, overlap: bucketed, bucket: 1MB}", {"allreduce"}),
                            ("{sharding: zero1, overlap: bucketed, bucket: 1MB}", {"allgather", "reducescatter"}),
                            ("{sharding: zero3, overlap: bucketed}", {"allgather", "reducescatter"})):
        overlapped = os.path.join(tmp, "overlap.yaml")
        open(overlapped, "w").write(open(scenario).read() + f"training: {training}\n")
        check_conservation(memwall, tmp, overlapped, "layer", gpus, steps, None, kinds)


def check_conservation(memwall, tmp, scenario, level, gpus, steps, per_step_rows, collective_kinds=None):
    if True:
        path = os.path.join(tmp, f"{level}.h5")
        subprocess.run([memwall, "run", scenario, "--trace", path, "--trace-level", level], check=True,
                       capture_output=True)
        t = Trace(path)
        s, ph = t.summary, t.phases
        # Energy: the phases' joules add up to the summary (per GPU per step, mean) x GPUs x steps.
        total = sum(float(np.sum(ph[c])) for c in ("e_arith_j", "e_hbm_j", "e_static_j", "e_network_j"))
        expect(rel_close(total, s["energy_j"] * gpus * steps), f"{level}: phase energy {total} != summary")
        expect(rel_close(float(np.sum(t.per_gpu["e_total_j"])), s["energy_j"] * gpus * steps),
               f"{level}: per-GPU energy != summary")
        for part in ("e_arith_j", "e_hbm_j", "e_static_j", "e_network_j"):
            expect(rel_close(float(np.sum(ph[part])), s[part] * gpus * steps, 1e-9) or s[part] == 0,
                   f"{level}: {part} does not add up")
        # Time: the last phase ends at the run's end; every GPU's rows tile [0, makespan].
        expect(rel_close(float(np.max(ph["t_end_s"])), s["step_time_s"] * steps), f"{level}: last end != step time")
        for g in range(gpus):
            rows = np.sort(ph[(ph["gpu"] == g) & (ph["stream"] == 0)], order="t_start_s")
            expect(rows["t_start_s"][0] == 0.0 and np.allclose(rows["t_start_s"][1:], rows["t_end_s"][:-1],
                                                                rtol=0, atol=1e-12),
                   f"{level}: GPU {g}'s phases leave gaps")
        # Rows: what the scenario implies, plus at most one `wait` row per GPU.
        waits = int(np.sum(ph["phase"] == [v for v, n in t.phase_names.items() if n == "wait"][0]))
        expect(per_step_rows is None or (len(ph) - waits == gpus * steps * per_step_rows and waits <= gpus),
               f"{level}: {len(ph)} phase rows ({waits} wait), expected {gpus * steps * (per_step_rows or 0)} + waits")
        if collective_kinds:
            # The communication stream carries the collectives, named by kind, with no static energy;
            # the compute stream's collective rows are the exposed waits, no longer than the collectives.
            comm = ph[ph["stream"] == 1]
            names = {t.phase_label(v) for v in comm["phase"]}
            expect(names == collective_kinds, f"{level}: overlapped collectives named {names}, not {collective_kinds}")
            expect(float(np.sum(comm["e_static_j"])) == 0.0, f"{level}: overlapped rows carry static energy")
            exposed = ph[(ph["stream"] == 0) & np.isin(ph["phase"], comm["phase"])]
            busy = float(np.sum(comm["t_end_s"] - comm["t_start_s"]))
            shown = float(np.sum(exposed["t_end_s"] - exposed["t_start_s"]))
            expect(0 < shown < busy, f"{level}: exposed {shown} s vs overlapped collectives {busy} s")
            expect(rel_close(float(np.sum(comm["e_network_j"])), s["e_network_j"] * gpus * steps),
                   f"{level}: network energy of the collectives != summary")
        # Messages: for every collective, each GPU sends what it receives; totals match per-GPU figures.
        if level != "step":
            c = t.comms
            for cid in np.unique(c["collective_id"]):
                rows = c[c["collective_id"] == cid]
                for g in range(gpus):
                    sent, got = np.sum(rows["bytes"][rows["src_gpu"] == g]), np.sum(rows["bytes"][rows["dst_gpu"] == g])
                    expect(rel_close(sent, got), f"{level}: collective {cid}, GPU {g} sent {sent} received {got}")
            # One id per collective call: as many as GPU 0 has collective rows (on the communication
            # stream when overlapped, where the compute stream's rows are waits; else on the compute stream).
            kinds = [v for v, n in t.phase_names.items() if n in ("allreduce", "allgather", "reducescatter")]
            mine = ph[(ph["gpu"] == 0) & np.isin(ph["phase"], kinds) & (ph["stream"] == (1 if collective_kinds else 0))]
            expect(len(np.unique(c["collective_id"])) == len(mine),
                   f"{level}: {len(np.unique(c['collective_id']))} collective ids, GPU 0 ran {len(mine)} collectives")
            expect(rel_close(float(np.sum(c["bytes"])), float(np.sum(t.per_gpu["bytes_sent"]))),
                   f"{level}: message bytes != per-GPU bytes sent")
            # Links: each message crosses two links (sender up, receiver down).
            expect(rel_close(float(np.sum(t.links["bytes_carried"])), 2 * float(np.sum(c["bytes"]))),
                   f"{level}: link bytes != 2 x message bytes")
            expect(rel_close(float(np.sum(t.links["e_network_j"])), s["e_network_j"] * gpus * steps),
                   f"{level}: link energy != network energy")
        for attr in ("memwall_version", "simgrid_version", "scenario_name", "scenario_yaml", "fabric", "options"):
            expect(attr in t.attrs, f"{level}: root attribute {attr} missing")
        expect(t.units.get("t_start_s") == "s" and t.units.get("e_hbm_j") == "J", f"{level}: units missing")
        print(f"{level}: {len(ph)} phase rows, {len(t.comms)} messages, energy {total:.6g} J conserved")


def check_reroute(memwall, tmp, scenario, failed_link, failure_s, gpus):
    """Bytes and energy conserved across a mid-run link failure; every GPU sends what it would have
    sent without the failure (the schedule's bytes do not depend on the routes)."""
    name = os.path.basename(scenario)
    path = os.path.join(tmp, "reroute.h5")
    p = subprocess.run([memwall, "run", scenario, "--trace", path, "--trace-level", "message"],
                       capture_output=True, text=True)
    expect(p.returncode == 0 and "Deadlock" not in p.stderr, f"{name}: exit {p.returncode}: {p.stderr}")
    if p.returncode != 0:
        return
    t = Trace(path)
    s, c = t.summary, t.comms
    healthy = os.path.join(tmp, "healthy.yaml")
    text = open(scenario).read()  # link_events come last in both scenarios
    open(healthy, "w").write(text[:text.index("  link_events")]
                             .replace("fabric: ../../", "fabric: " + os.path.join(HERE, "..", "")))
    subprocess.run([memwall, "run", healthy, "--trace", os.path.join(tmp, "healthy.h5"), "--trace-level",
                    "message"], check=True, capture_output=True)
    h = Trace(os.path.join(tmp, "healthy.h5")).comms
    for g in range(gpus):
        sent, got = np.sum(c["bytes"][c["src_gpu"] == g]), np.sum(c["bytes"][c["dst_gpu"] == g])
        expect(rel_close(sent, got), f"{name}: GPU {g} sent {sent} received {got}")
        expect(rel_close(sent, np.sum(h["bytes"][h["src_gpu"] == g])),
               f"{name}: GPU {g} sent {sent}, {np.sum(h['bytes'][h['src_gpu'] == g])} without the failure")
    expect(rel_close(float(np.sum(c["bytes"])), float(np.sum(t.per_gpu["bytes_sent"]))),
           f"{name}: message bytes != per-GPU bytes sent")
    expect(rel_close(float(np.sum(t.links["e_network_j"])), s["e_network_j"] * gpus),
           f"{name}: link energy != network energy")
    # Messages split at the failure: parts ending at it, and resent rests starting at it.
    expect(np.any(c["t_end_s"] == failure_s) and np.any(c["t_start_s"] == failure_s),
           f"{name}: no message was split at the failure")
    # The failed link carried bytes only until it went down.
    start = float(np.min(c["t_start_s"]))
    down = [r for r in t.links if r["name"] in (failed_link + b"_UP", failed_link + b"_DOWN")]
    expect(len(down) >= 1, f"{name}: {failed_link} carried nothing before it failed")
    for r in down:
        expect(0 < r["bytes_carried"] <= r["bandwidth"] * (failure_s - start) * (1 + 1e-9),
               f"{name}: {r['name']} carried {r['bytes_carried']} bytes in {failure_s - start} s")
    print(f"{name}: {len(c)} messages, bytes and energy conserved across the failure")


def reroute(memwall, tmp):
    # scenarios/what-if/8: leaf0-spine0 goes down at 0.35 s, during the hierarchical all-reduce.
    check_reroute(memwall, tmp, os.path.join(HERE, "..", "scenarios", "what-if", "8-hdr-spine-link-fails.yaml"),
                  b"leaf0-spine0", 0.35, 64)
    # A GPU's only NIC: its traffic goes over NVLink to a neighbour's NIC (this once deadlocked).
    check_reroute(memwall, tmp, os.path.join(HERE, "link-failures", "nic-down-hierarchical.yaml"),
                  b"gpu000003-nic", 0.15, 64)


def interrupted(memwall, tmp):
    # A failing run (unwritable trace path) leaves nothing.
    bad = os.path.join(tmp, "no-such-dir", "t.h5")
    p = subprocess.run([memwall, "run", write(tmp, 4, 1, 1), "--trace", bad], capture_output=True, text=True)
    expect(p.returncode != 0 and not os.path.exists(bad) and not os.path.exists(bad + ".tmp"),
           f"failed run: rc={p.returncode}, left a file")
    # A run killed half-way leaves nothing.
    big = write(tmp, 4096, 16, 6)  # about 4 s on a fast machine: still running when killed at 1 s
    out = os.path.join(tmp, "killed.h5")
    timeline = os.path.join(tmp, "killed.json")
    for sig in (signal.SIGTERM, signal.SIGINT):
        proc = subprocess.Popen([memwall, "run", big, "--trace", out, "--timeline", timeline],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        expect(proc.poll() is None, "the run finished before it could be killed")
        proc.send_signal(sig)
        proc.wait(timeout=60)
        left = [f for f in os.listdir(tmp) if f.startswith("killed")]
        expect(proc.returncode != 0 and not left, f"killed by {sig.name}: rc={proc.returncode}, left {left}")
        print(f"killed by {sig.name} half-way: exit {proc.returncode}, files left: {left}")


def main():
    memwall, mode = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as tmp:
        {"conservation": conservation, "reroute": reroute, "interrupted": interrupted}[mode](memwall, tmp)
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
