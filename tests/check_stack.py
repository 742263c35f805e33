#!/usr/bin/env python3
"""A stack profile carried to another GPU (issue 29's transfer rule), against the catalog's own
figures and a derived identity, never against memwall's output pasted back.

`gpu: {like: G, stack: S}` is G's data sheet with the achieved efficiencies of S's calibrated
profile (GEMM curve, attention, HBM, FP8 GEMMs), as fractions of G's own rates. So:

1. On B200 the run reports the profile's GEMM and attention efficiencies (those of the profile run
   on the same model, read from its own run) and B200's peak as the catalog's data sheet gives it.
2. Derived: a GPU with twice the tensor rates and twice the HBM bandwidth of H100 (same L2, so the
   same machine balance and re-blocking) runs every compute-bound phase and every memory-bound
   phase in half the time: one GPU (no communication), BF16 and FP8, compute and the optimizer
   (HBM-bound) each exactly halved. FP8 leaves the memory-bound optimizer phase as in BF16.
3. A data-sheet GPU without `stack` keeps the seed's ideal efficiencies (1): the default is the
   seed's behaviour.

Usage: check_stack.py MEMWALL CATALOG
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

SCENARIO = """name: stack check
gpu: {gpu}
model: {{hidden: 4096, layers: 4, heads: 32, seq_len: 4096, vocab: 32000}}
batch: {{global_batch: 4, micro_batch: 1}}
cluster: {{gpus: 1, fabric: seed-nvlink}}
training: {{precision: {precision}}}
"""


def flop_rate(text):
    """A catalog rate such as 989TFLOP/s or 2.25PFLOP/s, in FLOP/s."""
    text = str(text)
    for prefix, scale in (("PFLOP/s", 1e15), ("TFLOP/s", 1e12)):
        if text.endswith(prefix):
            return float(text[:-len(prefix)]) * scale
    raise SystemExit(f"unexpected rate {text!r} in the catalog")


def run(memwall, tmp, gpu, precision="bf16"):
    path = os.path.join(tmp, "s.yaml")
    with open(path, "w") as f:
        f.write(SCENARIO.format(gpu=gpu, precision=precision))
    p = subprocess.run([memwall, "run", "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"memwall run failed on gpu {gpu}: {p.stderr.strip()}")
    out = json.loads(p.stdout)
    return out[0] if isinstance(out, list) else out


def main():
    memwall, catalog = sys.argv[1], sys.argv[2]
    gpus = {g["name"]: g for g in yaml.safe_load(open(catalog))["gpus"]}
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        profile = run(memwall, tmp, "H100-SXM-megatron-core")
        carried = run(memwall, tmp, "{like: B200, stack: megatron-core}")
        for key in ("gemm_efficiency", "attention_efficiency"):
            if carried[key] != profile[key]:
                problems.append(f"B200 carried {key} {carried[key]} != the profile's {profile[key]}")
        if carried["gpu_stack"] != "megatron-core" or profile["gpu_stack"] != gpus["H100-SXM-megatron-core"]["stack"]:
            problems.append(f"gpu_stack: carried {carried['gpu_stack']!r}, profile {profile['gpu_stack']!r}, "
                            f"catalog {gpus['H100-SXM-megatron-core']['stack']!r}")
        b200_peak = flop_rate(gpus["B200"]["peak"])
        if abs(carried["gpu_peak_flops_per_s"] / b200_peak - 1) > 1e-12:
            problems.append(f"B200 carried peak {carried['gpu_peak_flops_per_s']} != data sheet {b200_peak}")
        print(f"B200 + megatron-core: GEMM {carried['gemm_efficiency']}, attention "
              f"{carried['attention_efficiency']}, peak {carried['gpu_peak_flops_per_s'] / 1e12:g} TFLOP/s")

        h100 = gpus["H100-SXM"]
        hbm_tb_s = float(str(h100["hbm_bandwidth"]).replace("TB/s", ""))
        double = (f"{{like: H100-SXM, peak: {2 * flop_rate(h100['peak']):g}, "
                  f"peak_fp8: {2 * flop_rate(h100['peak_fp8']):g}, hbm_bandwidth: {2 * hbm_tb_s:g}TB/s, "
                  f"tdp: 1400W, stack: megatron-core}}")
        optimizer_s = {}
        for precision in ("bf16", "fp8"):
            one = run(memwall, tmp, "{like: H100-SXM, stack: megatron-core}", precision)
            optimizer_s[precision] = one["breakdown"]["optimizer_s"]
            two = run(memwall, tmp, double, precision)
            for key in ("compute_s", "optimizer_s"):
                a, b = one["breakdown"][key], two["breakdown"][key]
                print(f"{precision} {key}: H100 {a:.9f} s, twice the rates {b:.9f} s, ratio {b / a:.12f}")
                if a <= 0 or abs(b / a - 0.5) > 1e-9:
                    problems.append(f"{precision} {key}: {b} s is not half of {a} s")

        # FP8 speeds the GEMMs up; the optimizer (FP32 master weights and states, HBM-bound) is as in BF16.
        if optimizer_s["fp8"] != optimizer_s["bf16"]:
            problems.append(f"FP8 changed the memory-bound optimizer phase: {optimizer_s}")
        seed = run(memwall, tmp, "H100-SXM")
        if seed["gemm_efficiency"] != 1 or seed["attention_efficiency"] != 1:
            problems.append(f"H100-SXM without a stack: efficiencies {seed['gemm_efficiency']}, "
                            f"{seed['attention_efficiency']} (the seed's 1 expected)")
    for p in problems:
        print("FAIL:", p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
