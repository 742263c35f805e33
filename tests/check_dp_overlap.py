#!/usr/bin/env python3
"""Data-parallel gradients overlapped with the backward in a grouped layout (`training.overlap:
bucketed` with tensor / pipeline / expert parallelism; Megatron-Core's overlap_grad_reduce), against
figures derived by hand, not from memwall's output.

Case: a seed-shaped GPT (h = 1024, L = 4, V = 32,000: 12 h^2 parameters a layer, 2 V h of
embeddings), TP 2 x DP 2 on a star of 100 GB/s links with no latency, A100, 2 micro-batches of
16,384 tokens (a layer's backward, ~2 ms, hides a layer's bucket, 0.13 ms). Per GPU, BF16 gradients
(2 B) of its half: a layer P = 12 h^2, the embeddings E = 2 V h bytes; all of them G = 4 P + E.
With DP 2 a ring round sends half of its bytes each way.
1. bucket 1 B (a bucket per weight tensor: DDP and Megatron-Core fill buckets tensor by tensor as the
   backward completes them, a layer's in the order fc2 4/12, fc1 4/12, proj 1/12, qkv 3/12 of P): only
   the last bucket, layer 0's QKV (its last tensor) with the embeddings (P / 4 + E), is exposed:
   dp_s = (P / 4 + E) / B (sharding none: reduce-scatter and all-gather rounds); with zero1
   (Megatron-Core's distributed optimizer with overlap_param_gather), its reduce-scatter after the
   backward, (P / 4 + E) / 2B, and, beside the next forward, the all-gathers of every bucket of layer 0
   and the embeddings (needed before the first layer; the others hide behind the forward),
   (P + E) / 2B.
2. bucket 100 GB (one bucket, complete at the end of the backward): dp_s = G / B, as without overlap
   (zero1: the whole reduce-scatter after the backward, the whole all-gather before the forward).
3. Conservation: the bytes each GPU sends are the same with and without overlap (the buckets add up
   to the stage's gradients), here and with a pipeline (1F1B and interleaved) and with experts
   (Mixtral-shaped, EP 2: expert gradients over their own ring).
4. The breakdown's members add up to the step; overlap is never slower than none.
5. FSDP with TP and no pipeline (sharding zero3, m = 2 micro-batches; each layer a unit, layer 0's
   with the embeddings). Without overlap the whole model is gathered before each pass and its
   gradients reduce-scattered once: dp_s = (2 m + 1) G / 2B. With overlap the stream gathers a unit
   one layer ahead and reduce-scatters each layer after its backward; exposed are each micro-batch's
   first gather (unit 0, P + E), behind the previous micro-batch's last reduce-scatter (unit 0), and
   the step's last reduce-scatter: dp_s = m (P + E) / B. Bytes: overlap reduce-scatters every
   micro-batch, (m - 1) G / 2 more per GPU. Memory: weights and gradients / DP, as zero3 in pure
   data parallelism.

Usage: check_dp_overlap.py MEMWALL
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []
H, L, V, B = 1024, 4, 32000, 100e9
P = 12 * H * H * 2 / 2  # bytes per GPU: params / TP 2, x 2 B
E = 2 * V * H * 2 / 2
G = L * P + E

BASE = """name: overlap-check
gpu: A100-80GB
model: {model}
batch: {{tokens_per_microbatch: {tokens}, microbatches: {mbs}}}
parallelism: {parallelism}
training: {{sharding: {sharding}, overlap: {overlap}{bucket}}}
cluster: {{gpus: {gpus}, fabric: {{kind: star, bandwidth: 100GB/s, latency: 0us}}}}
"""


def run(memwall, tmp, name, **keys):
    values = dict(model="{hidden: 1024, layers: 4, seq_len: 1024, vocab: 32000}", tokens=16384, mbs=2,
                  parallelism="{tensor: 2}", sharding="none", overlap="bucketed", bucket="", gpus=4)
    values.update(keys)
    path = os.path.join(tmp, name + ".yaml")
    open(path, "w").write(BASE.format(**values))
    r = subprocess.run([memwall, "run", path, "--json"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        return None
    return json.loads(r.stdout)


def near(label, got, expected, tolerance):
    err = got / expected - 1
    print(f"{label:66s} {got:12.6g}  expected {expected:12.6g}  {100 * err:+8.4f}% (allowed {100 * tolerance:g}%)")
    if abs(err) > tolerance:
        failures.append(f"{label}: {got:.6g}, expected {expected:.6g} ({100 * err:+.4f}%)")


def adds_up(label, j):
    total = sum(j["breakdown"].values())
    if abs(total / j["step_time_s"] - 1) > 1e-9:
        failures.append(f"{label}: breakdown sums to {total}, step {j['step_time_s']}")


def main():
    memwall = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for sharding in ("none", "zero1"):
            tiny = run(memwall, tmp, f"tiny-{sharding}", sharding=sharding, bucket=", bucket: 1B")
            huge = run(memwall, tmp, f"huge-{sharding}", sharding=sharding, bucket=", bucket: 100GB")
            flush = run(memwall, tmp, f"flush-{sharding}", sharding=sharding, overlap="none")
            if not (tiny and huge and flush):
                continue
            last = P / 4 + E  # layer 0's QKV with the embeddings
            # zero1: the last bucket's reduce-scatter after the backward, and the gathers of layer 0's
            # buckets with the embeddings (overlap_param_gather) before the first forward; the other
            # layers' gathers hide behind the forward.
            exposed = last / B if sharding == "none" else last / (2 * B) + (P + E) / (2 * B)
            near(f"{sharding}: bucket per tensor, exposed dp_s (s)", tiny["breakdown"]["dp_s"], exposed, 0.005)
            near(f"{sharding}: one bucket, exposed dp_s (s)", huge["breakdown"]["dp_s"], G / B, 0.005)
            near(f"{sharding}: no overlap, dp_s (s)", flush["breakdown"]["dp_s"], G / B, 0.005)
            for label, j in (("tiny", tiny), ("huge", huge), ("flush", flush)):
                adds_up(f"{sharding} {label}", j)
                near(f"{sharding} {label}: bytes sent per GPU, as without overlap", j["bytes_sent_per_gpu"],
                     flush["bytes_sent_per_gpu"], 1e-12)
            if tiny["step_time_s"] > flush["step_time_s"]:
                failures.append(f"{sharding}: overlap slower than none")
        m = 2
        fsdp = {ov: run(memwall, tmp, f"fsdp-{ov}", sharding="zero3", overlap=ov) for ov in ("none", "bucketed")}
        zero1 = run(memwall, tmp, "fsdp-zero1-reference", sharding="zero1", overlap="none")
        if fsdp["none"] and fsdp["bucketed"] and zero1:
            near("FSDP + TP, no overlap: dp_s (s)", fsdp["none"]["breakdown"]["dp_s"], (2 * m + 1) * G / (2 * B), 0.005)
            near("FSDP + TP, prefetch: exposed dp_s (s)", fsdp["bucketed"]["breakdown"]["dp_s"], m * (P + E) / B, 0.005)
            near("FSDP + TP: extra bytes per GPU with a reduce-scatter per micro-batch",
                 fsdp["bucketed"]["bytes_sent_per_gpu"] - fsdp["none"]["bytes_sent_per_gpu"], (m - 1) * G / 2, 1e-9)
            near("FSDP + TP: weights per GPU, zero1's / DP 2", fsdp["none"]["memory"]["weight_bytes"],
                 zero1["memory"]["weight_bytes"] / 2, 1e-12)
            near("FSDP + TP: gradients per GPU, zero1's / DP 2", fsdp["none"]["memory"]["gradient_bytes"],
                 zero1["memory"]["gradient_bytes"] / 2, 1e-12)
            for ov, j in fsdp.items():
                adds_up(f"fsdp {ov}", j)
        # A pipeline (1F1B and interleaved) and experts: conservation, and never slower.
        cases = {
            "pp2-1f1b": dict(parallelism="{pipeline: 2}", mbs=4, tokens=4096),
            "pp2-interleaved": dict(parallelism="{pipeline: 2, virtual_stages: 2}", mbs=4, tokens=4096),
            "tp2-pp2": dict(parallelism="{tensor: 2, pipeline: 2}", mbs=4, tokens=4096, gpus=8),
            "moe-ep2": dict(model="{like: mixtral-8x7b, layers: 4, seq_len: 4096}", parallelism="{tensor: 2, expert: 2}",
                            mbs=2, tokens=4096, gpus=8, sharding="zero1"),
        }
        for name, keys in cases.items():
            keys.setdefault("gpus", 4)
            with_overlap = run(memwall, tmp, name, bucket=", bucket: 40MB", **keys)
            without = run(memwall, tmp, name + "-flush", overlap="none", **keys)
            if not (with_overlap and without):
                continue
            adds_up(name, with_overlap)
            near(f"{name}: bytes sent per GPU, as without overlap", with_overlap["bytes_sent_per_gpu"],
                 without["bytes_sent_per_gpu"], 1e-9)
            print(f"  {name}: step {without['step_time_s']:.6f} s -> {with_overlap['step_time_s']:.6f} s, "
                  f"dp_s {without['breakdown']['dp_s']:.6f} -> {with_overlap['breakdown']['dp_s']:.6f}")
            if with_overlap["step_time_s"] > without["step_time_s"] * (1 + 1e-9):
                failures.append(f"{name}: overlap slower than none")
    if failures:
        sys.exit("FAIL:\n" + "\n".join(failures))
    print("all data-parallel overlap checks passed")


if __name__ == "__main__":
    main()
