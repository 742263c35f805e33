#!/usr/bin/env python3
"""The default ring order must not add contention: on every catalog fabric, at 4,096 GPUs (or the
fabric's own size), a simulated ring all-reduce of a 7B model's fp16 gradients takes no less than the
alpha-beta bound of a ring over the fabric's slowest link class, and at most 2% more:

    T_bound = 2 (n - 1) (alpha + G / (n beta))

beta: the bandwidth of the slowest link class every ring must cross (a GPU's NIC on a cluster, its
link on a star, a torus or dragonfly link), alpha: the latency of the shortest hop across that class
(into and out of the NIC or link), both read off the fabric files by hand (not from memwall). The
margin covers longer hops (on a rail-optimised fabric the hop back to GPU 0 may cross rails over
NVLink: 2 us more per step). A ring order that puts two flows on one link doubles the bandwidth
term (the bug this guards: 2.24 s instead of 1.13 s at 4,096 GPUs on dgx-a100-hdr).

That bound is one ring's (`nccl: {channels: 1}`). With NCCL's default channels (one per NIC of a
server, sim/collectives/channels.hpp) the same ring runs as k rail-aligned rings, each over 1/k of
the data and crossing servers on its own NIC: the bound's beta becomes min(NVLink x k/(k-1),
k x NIC) (see CHANNELS_BETA), read off the fabric files by hand too, with the same alpha and the
same 0 to +2% margin. Link rates are the files' line rates times their `efficiency`.

Usage: check_ring_order.py MEMWALL TOPOLOGIES_DIR [--gpus N] [FABRIC ...]
(--gpus: another size for the fabrics that scale; the sanitized build uses 256, as its actors are
system threads)
"""
import json
import os
import subprocess
import sys
import tempfile

GB = 1e9
US = 1e-6
PARAMS_7B = 6852050944  # hidden 4096, 32 layers, vocab 50000: 12 L d^2 + 13 L d + 2 V d (seed's count)
GRAD_BYTES = 2 * PARAMS_7B

# fabric: (GPUs, beta bytes/s, alpha s, why); CHANNELS_BETA: beta with the default channels, where it differs
FABRICS = {
    "seed-ib": (4096, 25 * GB, 0.0, "star, 25 GB/s per GPU, no latency"),
    "seed-nvlink": (4096, 300 * GB, 0.0, "star, 300 GB/s per GPU, no latency"),
    "gb200-nvl72": (4096, 900 * 0.802 * GB, 0.6 * US, "one NVLink domain: 900 GB/s x 0.802; GPU link 0.3 us in, 0.3 us out"),
    # A hop between servers: NIC (1 us) - leaf (- spine - leaf: uplinks have no latency) - NIC (1 us).
    # The NICs carry `efficiency: 0.96` (what NCCL's own tuner assumes an IB NIC delivers: 24 of
    # 25 GB/s on HDR, 48 of 50 on NDR), so beta is the line rate x 0.96.
    "dgx-a100-hdr": (4096, 200e9 / 8 * 0.96, 2 * US, "NIC 200 Gb/s x 0.96; hop nic+nic"),
    "dgx-h100-ndr": (4096, 400e9 / 8 * 0.96, 2 * US, "NIC 400 Gb/s x 0.96; hop nic+nic"),
    "fat-tree-2to1": (4096, 400e9 / 8 * 0.96, 2 * US, "NIC 400 Gb/s x 0.96; hop nic+nic"),
    "hgx-h800-ndr": (4096, 400e9 / 8 * 0.96, 2 * US, "NIC 400 Gb/s x 0.96; hop nic+nic"),
    "fat-tree-4to1": (4096, 400e9 / 8 * 0.96, 2 * US, "NIC 400 Gb/s x 0.96; hop nic+nic"),
    # Fixed-size fabrics run at their own GPU count.
    "tpu-v4-torus": (64, 45 * GB, 1 * US, "4x4x4 torus, 45 GB/s links, 1-link hop"),
    "dragonfly-example": (72, 200e9 / 8, 2 * US, "200 Gb/s links, hop gpu+gpu link on one router"),
}

# With k rail-aligned channels on a server of k GPUs and k NICs, each channel's ring leaves the
# server from one GPU through its NIC and moves between the other GPUs over NVLink: a GPU's NVLink
# carries (k - 1)/k of its data, its NIC 1/k. The ring's bus bandwidth is therefore
# min(NVLink x eff x k/(k - 1), k x NIC x 0.96), per direction, from the fabric files:
# DGX A100 min(300 x 0.8 x 8/7, 8 x 25 x 0.96) = 192 (NIC bound); H100 fabrics
# min(450 x 0.824 x 8/7, 8 x 50 x 0.96) = 384 (NIC bound too: 423.8 > 384) (the 2:1 and 4:1
# fat-trees: a leaf's 4 or 8 servers cross to the next leaf on one channel each, fewer than its
# up-links); HGX H800 min(200 x 0.824 x 8/7, 384) = 188.3: NVLink bound, the one catalog fabric that is.
def channels_beta(nvlink_gb_s, nvlink_eff, nic_gb_s, k=8):
    return min(nvlink_gb_s * nvlink_eff * k / (k - 1), k * nic_gb_s * 0.96) * GB


CHANNELS_BETA = {
    "dgx-a100-hdr": channels_beta(300, 0.8, 25),
    "dgx-h100-ndr": channels_beta(450, 0.824, 50),
    "fat-tree-2to1": channels_beta(450, 0.824, 50),
    "fat-tree-4to1": channels_beta(450, 0.824, 50),
    "hgx-h800-ndr": channels_beta(200, 0.824, 50),
}

SCENARIO = """name: ring order on {fabric}
gpu: H100-SXM
model: {{hidden: 4096, layers: 32, seq_len: 2048, vocab: 50000}}
batch: {{tokens_per_microbatch: 2048, microbatches: 1}}
cluster: {{gpus: {gpus}, collective: ring, fabric: {path}{channels}}}
"""


def main():
    memwall, topologies = sys.argv[1], os.path.abspath(sys.argv[2])
    args = sys.argv[3:]
    scaled_gpus = None
    if args[:1] == ["--gpus"]:
        scaled_gpus, args = int(args[1]), args[2:]
    names = args or sorted(FABRICS)
    shipped = sorted(f[:-5] for f in os.listdir(topologies) if f.endswith(".yaml"))
    missing = [f for f in shipped if f not in FABRICS]
    if missing:
        sys.exit(f"catalog fabrics without a hand-derived bound here: {missing}")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            gpus, beta, alpha, why = FABRICS[name]
            if scaled_gpus and gpus == 4096:
                gpus = scaled_gpus
            cases = [(", nccl: {channels: 1}", beta, "one ring")]
            if name in CHANNELS_BETA:
                cases.append(("", CHANNELS_BETA[name], "default channels"))
            for channels, case_beta, label in cases:
                path = os.path.join(tmp, name + ".yaml")
                with open(path, "w") as f:
                    f.write(SCENARIO.format(fabric=name, gpus=gpus, path=os.path.join(topologies, name + ".yaml"),
                                            channels=channels))
                run = subprocess.run([memwall, "run", path, "--json"], capture_output=True, text=True, timeout=600)
                if run.returncode != 0:
                    failures.append(f"{name}: exit {run.returncode}: {run.stderr.strip()}")
                    continue
                result = json.loads(run.stdout)
                t = result["t_allreduce_s"]
                bound = 2 * (gpus - 1) * (alpha + GRAD_BYTES / (gpus * case_beta))
                err = t / bound - 1
                print(f"{name:18s} {gpus:5d} GPUs  {label:16s} ring {t * 1e3:9.3f} ms  alpha-beta {bound * 1e3:9.3f} ms  "
                      f"{err * 100:+6.2f}%  ({why}; beta {case_beta / GB:g} GB/s)")
                # The bound charges every step the NIC hop's latency; where the channels' rings are NVLink
                # bound (HGX H800), a few steps are paced by the NVLink hop's shorter one: 2 us of 162 ms.
                if not -2e-5 <= err <= 0.02:
                    failures.append(f"{name} ({label}): ring {t:.4f} s is {err * 100:+.1f}% from the bound "
                                    f"(allowed: 0 to +2%) {bound:.4f} s")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
