#!/usr/bin/env python3
"""MoE routing capacity and the expert all-to-all beside the compute (issue 28), against hand-derived
figures. A 4-layer MoE model (8 experts, top-2, every layer MoE, no LM head) on 16 H100 with expert
parallelism E = 4, 2 micro-batches of 2,048 tokens.

All-to-all bytes per GPU by hand: tokens x top_k x d x 2 B x (E - 1)/E per all-to-all, 4 per layer
(dispatch and combine, forward and backward), x layers x micro-batches, x the tokens dispatched:
dropless 1; capacity c = 1.5 with the hot rank at f = 2 (the others at (E - f)/(E - 1) = 2/3, under
c): (min(f, c) + (E - 1) x 2/3) / E = 0.875; padded to c = 1.5 on balanced routing: 1.5.
Routed compute: with R the hot rank's extra time at f = 2 over balanced routing (f - 1 = 1 mean's
worth), a capacity of 1.5 leaves it (min(f, c) - 1) R = 0.5 R; the mean GPU's compute moves by
(0.875 - 1) R = -0.125 R (the dropped tokens), and padding every rank to 1.5 adds 0.5 R to every GPU.
Overlap (parallelism.moe_a2a_overlap): bytes unchanged; on DGX H100 each pass's all-to-all is
shorter than its compute, so it is hidden whole: step = the step without overlap less its ep_s, and
ep_s = 0; on a 20 GB/s star each outlasts its compute, so exposed ep_s = ep_s without overlap less
all the compute (every compute phase of this model is an MoE layer pass).

Usage: check_moe_options.py MEMWALL
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis"))
import numpy as np  # noqa: E402
from trace_io import Trace  # noqa: E402

GPUS, E, TOKENS, TOP_K, D, LAYERS, MB = 16, 4, 2048, 2, 2048, 4, 2
BASE = """name: "MoE EP 4 {name}"
gpu: H100-SXM
model: {{hidden: 2048, layers: 4, heads: 16, seq_len: 2048, vocab: 32000,
        moe: {{experts: 8, top_k: 2, expert_ffn_hidden: 4096{moe}}}}}
batch: {{tokens_per_microbatch: 2048, microbatches: 2}}
cluster: {{gpus: 16, fabric: {fabric}}}
parallelism: {{expert: 4{par}}}
training: {{sharding: zero1}}
"""
STAR = "{kind: star, bandwidth: 20GB/s, latency: 1us}"


def run(memwall, tmp, name, moe="", par="", fabric="dgx-h100-ndr", trace=False):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(BASE.format(name=name, moe=moe, par=par, fabric=fabric))
    args = [memwall, "run", "--json", path] + (["--trace", os.path.join(tmp, name + ".h5")] if trace else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"{name}: exit {p.returncode}: {p.stderr[-400:]}")
    return json.loads(p.stdout)


def expert_bytes(tmp, name):
    t = Trace(os.path.join(tmp, name + ".h5"))
    kind = {v: k for k, v in t.phase_names.items()}["ep_comm"]
    sel = t.comms[t.comms["kind"] == kind]
    return np.bincount(sel["src_gpu"].astype(int), weights=sel["bytes"], minlength=GPUS)


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(abs(a), abs(b), 1e-30)


def main():
    memwall = sys.argv[1]
    failures = []
    per_a2a = TOKENS * TOP_K * D * 2.0 * (E - 1) / E
    dropless = per_a2a * 4 * LAYERS * MB
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "balanced": run(memwall, tmp, "balanced", trace=True),
            "hot": run(memwall, tmp, "hot", moe=", imbalance: 2", trace=True),
            "capacity": run(memwall, tmp, "capacity", moe=", imbalance: 2, capacity_factor: 1.5", trace=True),
            "padded": run(memwall, tmp, "padded", moe=", capacity_factor: 1.5, pad_to_capacity: true", trace=True),
        }
        for name, dispatched in (("balanced", 1.0), ("hot", 1.0), ("capacity", 0.875), ("padded", 1.5)):
            got = expert_bytes(tmp, name)
            want = dropless * dispatched
            ok = all(close(g, want) for g in got)
            print(f"{name}: all-to-all bytes per GPU {got.min():.0f}..{got.max():.0f}, by hand {want:.0f} "
                  f"({dispatched} x dropless) {'ok' if ok else 'MISMATCH'}")
            if not ok:
                failures.append(f"{name}: all-to-all bytes {got} != {want}")
        t_bal = runs["balanced"]["t_compute_s"]
        r = runs["hot"]["parallelism"]["t_compute_max_s"] - t_bal
        checks = [
            ("capacity: the hot rank's extra compute = 0.5 R",
             runs["capacity"]["parallelism"]["t_compute_max_s"] - t_bal, 0.5 * r),
            ("capacity: the mean GPU's compute moves by -0.125 R", runs["capacity"]["t_compute_s"] - t_bal, -0.125 * r),
            ("padded: every GPU's compute + 0.5 R", runs["padded"]["t_compute_s"] - t_bal, 0.5 * r),
            ("padded: the busiest GPU's too", runs["padded"]["parallelism"]["t_compute_max_s"] - t_bal, 0.5 * r),
        ]
        for what, got, want in checks:
            print(f"{what}: {got * 1e6:.3f} us, by hand {want * 1e6:.3f} us (R = {r * 1e6:.3f} us)")
            if not close(got, want, 1e-6):
                failures.append(f"{what}: {got} != {want}")
        for fabric, label in (("dgx-h100-ndr", "DGX H100"), (STAR, "20 GB/s star")):
            plain = run(memwall, tmp, "plain", fabric=fabric)
            over = run(memwall, tmp, "overlap", par=", moe_a2a_overlap: true", fabric=fabric)
            ep0, ep1 = plain["breakdown"]["ep_s"], over["breakdown"]["ep_s"]
            hidden_whole = fabric != STAR
            want_ep = 0.0 if hidden_whole else ep0 - plain["t_compute_s"]
            print(f"overlap on {label}: ep_s {ep0 * 1e3:.4f} -> {ep1 * 1e3:.4f} ms (by hand {want_ep * 1e3:.4f}), "
                  f"step {plain['step_time_s'] * 1e3:.4f} -> {over['step_time_s'] * 1e3:.4f} ms")
            if not close(over["bytes_sent_per_gpu"], plain["bytes_sent_per_gpu"], 1e-12):
                failures.append(f"overlap on {label}: bytes changed")
            if abs(ep1 - want_ep) > 1e-9 * plain["step_time_s"]:
                failures.append(f"overlap on {label}: exposed ep_s {ep1} != {want_ep}")
            if not close(over["step_time_s"], plain["step_time_s"] - (ep0 - ep1), 1e-9):
                failures.append(f"overlap on {label}: the step did not lose what was hidden")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
