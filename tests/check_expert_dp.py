#!/usr/bin/env python3
"""Expert gradients over the expert-data-parallel group (Megatron-Core's expt_dp_group, issue 28):
a routed expert's gradients are reduced over the GPUs holding the same experts, the dense ones over
all the stage's replicas. Bytes by hand from the trace's reduce-scatter messages, per GPU:
2 B x ((D - 1) / D x P_dense + (D_e - 1) / D_e x P_experts_per_gpu), D = 16 replicas, D_e = D / EP.

An 8-expert model (2 layers, hidden 1024, SwiGLU experts of 2048: 3 x 1024 x 2048 weights each) on
16 GPUs: EP 4 (blocks of 4 replicas; the 4 GPUs at the same place of each block hold the same
experts: D_e = 4) and EP 8 (D_e = 2). Before, every gradient went over all 16.

Usage: check_expert_dp.py MEMWALL
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis"))
import numpy as np  # noqa: E402
from trace_io import Trace  # noqa: E402

SCENARIO = """name: "8 experts, 16 GPUs, EP {ep}"
gpu: H100-SXM
model: {{hidden: 1024, layers: 2, heads: 8, seq_len: 1024, vocab: 1000, ffn: swiglu, causal: true,
        moe: {{experts: 8, top_k: 2, expert_ffn_hidden: 2048}}}}
batch: {{global_batch: 16, micro_batch: 1}}
cluster: {{gpus: 16, fabric: {{kind: star, bandwidth: 25GB/s}}}}
parallelism: {{expert: {ep}}}
training: {{sharding: zero1}}
"""
EXPERT = 3 * 1024 * 2048           # one expert's weights
EXPERTS_TOTAL = 2 * 8 * EXPERT     # both layers' routed experts


def main():
    memwall = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for ep in (4, 8):
            path, trace = os.path.join(tmp, f"ep{ep}.yaml"), os.path.join(tmp, f"ep{ep}.h5")
            with open(path, "w") as f:
                f.write(SCENARIO.format(ep=ep))
            run = subprocess.run([memwall, "run", "--json", path, "--trace", trace], capture_output=True, text=True,
                                 timeout=300)
            if run.returncode != 0:
                failures.append(f"EP {ep}: exit {run.returncode}: {run.stderr[-300:]}")
                continue
            params = json.loads(run.stdout)["params"]
            t = Trace(trace)
            c = t.comms
            kind = {name: value for value, name in t.phase_names.items()}.get("reducescatter")
            rs = c[c["kind"] == kind]
            per_gpu = np.bincount(rs["src_gpu"].astype(int), weights=rs["bytes"], minlength=16)
            d, d_e = 16, 16 // ep
            expected = 2 * ((d - 1) / d * (params - EXPERTS_TOTAL) + (d_e - 1) / d_e * EXPERTS_TOTAL / ep)
            worst = max(abs(b / expected - 1) for b in per_gpu)
            print(f"EP {ep}: reduce-scatter bytes per GPU {per_gpu.min():.0f}..{per_gpu.max():.0f}, by hand "
                  f"{expected:.0f} (dense {params - EXPERTS_TOTAL:.0f} params over {d}, experts "
                  f"{EXPERTS_TOTAL // ep} per GPU over {d_e}); worst {worst:.2e}")
            if worst > 1e-6:
                failures.append(f"EP {ep}: reduce-scatter bytes per GPU {per_gpu} != {expected}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
