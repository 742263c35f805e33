#!/usr/bin/env python3
"""HSDP (training.shard_group, issue 28): FSDP's gathers and reduce-scatters stay inside the shard
group, the shards' gradients are all-reduced across the replica groups. Bytes per GPU by hand, from
U = 2 B x params (BF16 weights and gradients), s = shard group, r = replicas = data / s, m = 2
micro-batches:
  overlap none (the whole model at once): all-gathers 2 m (s - 1)/s U (forward and backward of each
  micro-batch), reduce-scatter (s - 1)/s U once after the flush, all-reduce 2 (r - 1)/r U/s;
  overlap bucketed (layer by layer, every micro-batch): all-gathers as above, reduce-scatters
  m (s - 1)/s U, all-reduces 2 m (r - 1)/r U/s.
Every all-gather and reduce-scatter message joins two GPUs of one shard group (ranks s k .. s k + s - 1),
every all-reduce message two GPUs at the same place of different groups. Memory: weights, gradients
and optimizer state over s GPUs (2, 2 and 12 B x params / s). A shard group of all data-parallel
ranks runs exactly as FSDP does (pure data parallelism's chosen collective: same step, same bytes).
With tensor parallelism 2 (shard groups of 4 data ranks, 8 GPUs: one server) each GPU holds U / 2,
and the same sums hold for it. Under a pipeline and with context parallelism: check_pipeline_and_context.

Usage: check_hsdp.py MEMWALL
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis"))
import numpy as np  # noqa: E402
from trace_io import Trace  # noqa: E402

GPUS, SHARD, MB = 32, 8, 2
SCENARIO = """name: "HSDP {shard} x {replicas}, overlap {overlap}"
gpu: H100-SXM
model: {{hidden: 2048, layers: 4, heads: 16, seq_len: 2048, vocab: 32000}}
batch: {{tokens_per_microbatch: 2048, microbatches: {mb}}}
cluster: {{gpus: {gpus}, fabric: dgx-h100-ndr}}
training: {{sharding: zero3, overlap: {overlap}{shard_key}}}
"""
TP = """parallelism: {tensor: 2}
"""


def run(memwall, tmp, name, text, trace=False):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    args = [memwall, "run", "--json", path] + (["--trace", os.path.join(tmp, name + ".h5")] if trace else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"{name}: exit {p.returncode}: {p.stderr[-400:]}")
    return json.loads(p.stdout)


def scenario(shard, overlap, tensor=1):
    key = f", shard_group: {shard}" if shard else ""
    data = GPUS // tensor
    return SCENARIO.format(shard=shard or data, replicas=data // (shard or data), overlap=overlap, mb=MB,
                           gpus=GPUS, shard_key=key) + (TP if tensor > 1 else "")


def main():
    memwall = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for overlap, tensor in (("none", 1), ("bucketed", 1), ("bucketed", 2)):
            s = SHARD // tensor  # a shard group is one server's GPUs
            r = GPUS // tensor // s
            label = f"{overlap}{', TP 2' if tensor > 1 else ''}"
            name = f"hsdp-{overlap}-tp{tensor}"
            rec = run(memwall, tmp, name, scenario(s, overlap, tensor), trace=True)
            u = 2.0 * rec["params"] / tensor
            if rec["sharding"] != "zero3" or rec["shard_group"] != s:
                failures.append(f"{label}: the record says sharding {rec['sharding']}, shard_group {rec['shard_group']}")
            per_mb = MB if overlap == "bucketed" else 1
            expected = {"allgather": 2 * MB * (s - 1) / s * u, "reducescatter": per_mb * (s - 1) / s * u,
                        "allreduce": per_mb * 2 * (r - 1) / r * u / s}
            t = Trace(os.path.join(tmp, name + ".h5"))
            c = t.comms
            kinds = {name: value for value, name in t.phase_names.items()}
            for name, want in expected.items():
                sel = c[c["kind"] == kinds[name]]
                src, dst = sel["src_gpu"].astype(int), sel["dst_gpu"].astype(int)
                per_gpu = np.bincount(src, weights=sel["bytes"], minlength=GPUS)
                worst = max(abs(b / want - 1) for b in per_gpu)
                group = s * tensor  # GPUs of one shard group: consecutive ranks (TP innermost)
                if name == "allreduce":
                    placed = np.all((src % group == dst % group) & (src // group != dst // group))
                else:
                    placed = np.all(src // group == dst // group)
                print(f"overlap {label}: {name} {per_gpu.min():.0f}..{per_gpu.max():.0f} B per GPU, by hand "
                      f"{want:.0f} (worst {worst:.1e}); {len(sel)} messages, "
                      f"{'all' if placed else 'NOT all'} {'across the replica groups' if name == 'allreduce' else 'inside a shard group'}")
                if worst > 1e-9 or len(sel) == 0:
                    failures.append(f"{label}: {name} bytes per GPU {per_gpu} != {want}")
                if not placed:
                    failures.append(f"{label}: {name} messages leave their group")
            if tensor > 1:
                print(f"overlap {label}: HSDP {s} x {r} step {rec['step_time_s'] * 1e3:.3f} ms")
                continue  # its TP collectives count in bytes_sent_per_gpu too
            total = sum(expected.values())
            if abs(rec["bytes_sent_per_gpu"] / total - 1) > 1e-9:
                failures.append(f"{overlap}: bytes_sent_per_gpu {rec['bytes_sent_per_gpu']} != {total}")
            mem = rec["memory"]
            for field, per_param in (("weight_bytes", 2), ("gradient_bytes", 2), ("optimizer_bytes", 12)):
                want = per_param * rec["params"] / s
                if abs(mem[field] / want - 1) > 1e-12:
                    failures.append(f"memory {field} {mem[field]} != {per_param} B x params / {s} = {want}")
            # A shard group of every data-parallel rank is FSDP: pure data parallelism's numbers.
            whole = run(memwall, tmp, f"whole-{overlap}", scenario(GPUS, overlap))
            fsdp = run(memwall, tmp, f"fsdp-{overlap}", scenario(0, overlap))
            for field in ("step_time_s", "bytes_sent_per_gpu", "energy_j"):
                if abs(whole[field] / fsdp[field] - 1) > 1e-12:
                    failures.append(f"{overlap}: shard group of all {GPUS}: {field} {whole[field]} != FSDP's {fsdp[field]}")
            print(f"overlap {overlap}: HSDP {s} x {r} step {rec['step_time_s'] * 1e3:.3f} ms; shard group of all "
                  f"{GPUS} {whole['step_time_s'] * 1e3:.6f} ms, FSDP (pure data parallelism) {fsdp['step_time_s'] * 1e3:.6f} ms")
        failures += check_pipeline_and_context(memwall, tmp)
    if failures:
        sys.exit("\n".join(failures))


def per_gpu_bytes(trace_path):
    """Per GPU: bytes sent by kind, and the (src, dst) pairs of each kind."""
    t = Trace(trace_path)
    c = t.comms
    out = {}
    for value, name in t.phase_names.items():
        sel = c[c["kind"] == value]
        src, dst = sel["src_gpu"].astype(int), sel["dst_gpu"].astype(int)
        out[name] = (np.bincount(src, weights=sel["bytes"], minlength=GPUS), src, dst)
    return out


def check_pipeline_and_context(memwall, tmp):
    """HSDP under a pipeline (PP 2, shard group 4 of DP 16: r = 4) and with context parallelism (CP 2,
    shard group 4 data ranks x 2 context ranks = 8 GPUs, one server; r = 4).
    PP, either overlap: a stage's gradients G (per GPU) are reduce-scattered in the shard group
    ((S - 1)/S G), all-reduced across the groups (2 (r - 1)/r G/S) and the updated shard all-gathered
    ((S - 1)/S G), once per step, so per GPU AR = 2 (r - 1)/r RS/(S - 1), AG = RS, and the stages' RS
    add up to (S - 1)/S of 2 B x params. Shard groups: ranks 16 p + 4 k .. 16 p + 4 k + 3 (stage p).
    CP, overlap none: as FSDP over a shard group of s = 8 slots, all-gathers 2 m (s - 1)/s U,
    reduce-scatter (s - 1)/s U, all-reduce 2 (r - 1)/r U/s, U = 2 B x params; groups of 8 ranks."""
    failures = []
    s_data, r = 4, 4
    for overlap in ("none", "bucketed"):
        name = f"hsdp-pp2-{overlap}"
        text = scenario(s_data, overlap) + "parallelism: {pipeline: 2}\n"
        rec = run(memwall, tmp, name, text.replace("microbatches: 2", "microbatches: 4"), trace=True)
        b = per_gpu_bytes(os.path.join(tmp, name + ".h5"))
        rs, rs_src, rs_dst = b["reducescatter"]
        ar, ar_src, ar_dst = b["allreduce"]
        ag, ag_src, ag_dst = b["allgather"]
        stage_rs = [rs[:16], rs[16:]]
        want_total = (s_data - 1) / s_data * 2.0 * rec["params"]
        got_total = stage_rs[0][0] + stage_rs[1][0]
        checks = [
            ("every GPU of a stage sends the same", all(np.ptp(x) <= 1e-9 * x.max() for x in stage_rs)),
            (f"the stages' reduce-scatters add up: {got_total:.0f} B vs (S-1)/S x 2 B x params {want_total:.0f}",
             abs(got_total / want_total - 1) < 1e-9),
            ("all-reduce = 2 (r-1)/r RS/(S-1) on every GPU",
             np.allclose(ar, 2 * (r - 1) / r * rs / (s_data - 1), rtol=1e-9, atol=0)),
            ("all-gather = reduce-scatter on every GPU", np.allclose(ag, rs, rtol=1e-9, atol=0)),
            ("reduce-scatters and all-gathers inside a shard group",
             np.all(rs_src // 4 == rs_dst // 4) and np.all(ag_src // 4 == ag_dst // 4)),
            ("all-reduces across the groups of a stage, same place",
             np.all((ar_src % 4 == ar_dst % 4) & (ar_src // 16 == ar_dst // 16) & (ar_src // 4 != ar_dst // 4))),
        ]
        print(f"HSDP x PP 2, overlap {overlap}: RS {stage_rs[0][0]:.0f} / {stage_rs[1][0]:.0f} B (stage 0 / 1), "
              f"AR {ar[0]:.0f} / {ar[16]:.0f}, AG {ag[0]:.0f} / {ag[16]:.0f}; step {rec['step_time_s'] * 1e3:.3f} ms")
        failures += [f"HSDP x PP, overlap {overlap}: {what}" for what, ok in checks if not ok]
    name = "hsdp-cp2"
    rec = run(memwall, tmp, name, scenario(s_data, "none") + "parallelism: {context: 2}\n", trace=True)
    b = per_gpu_bytes(os.path.join(tmp, name + ".h5"))
    s, u = 2 * s_data, 2.0 * rec["params"]
    expected = {"allgather": 2 * MB * (s - 1) / s * u, "reducescatter": (s - 1) / s * u,
                "allreduce": 2 * (r - 1) / r * u / s}
    for kind, want in expected.items():
        got, src, dst = b[kind]
        worst = max(abs(x / want - 1) for x in got)
        if kind == "allreduce":
            placed = np.all((src % s == dst % s) & (src // s != dst // s))
        else:
            placed = np.all(src // s == dst // s)
        print(f"HSDP x CP 2: {kind} {got.min():.0f}..{got.max():.0f} B per GPU, by hand {want:.0f} "
              f"(worst {worst:.1e}), {'placed' if placed else 'NOT placed'}")
        if worst > 1e-9 or not placed:
            failures.append(f"HSDP x CP: {kind} {got.min()}..{got.max()} vs {want}, placed {placed}")
    mem = rec["memory"]
    if abs(mem["weight_bytes"] / (2 * rec["params"] / s) - 1) > 1e-12:
        failures.append(f"HSDP x CP: weights {mem['weight_bytes']} != 2 B x params / {s}")
    return failures


if __name__ == "__main__":
    main()
