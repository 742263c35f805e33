#!/usr/bin/env python3
"""`memwall topo` on every catalog fabric: GPU count, diameter and the rank-halves bisection against
figures derived by hand from the fabric files, and a DOT file with one node per GPU. (In a Debug or
sanitized build this also runs Boost's max-flow self-check, which once aborted every `topo`.)

Usage: check_topo.py MEMWALL TOPOLOGIES_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

N = 256  # GPUs for the fabrics that scale
# fabric: (--gpus or None, GPUs, diameter hops, bisection GB/s per direction or None, why)
EXPECTED = {
    # Non-blocking rail-optimised fat-trees: each of the N/2 GPUs of one half has its own NIC path.
    # NICs and the up-links that inherit their rate deliver `efficiency: 0.96` of line rate.
    "dgx-a100-hdr": (N, N, 4, N / 2 * 25 * 0.96, "N/2 x 200 Gb/s NICs x 0.96; GPU-leaf-spine-leaf-GPU"),
    "dgx-h100-ndr": (N, N, 4, N / 2 * 50 * 0.96, "N/2 x 400 Gb/s NICs x 0.96"),
    "hgx-h800-ndr": (N, N, 4, N / 2 * 50 * 0.96, "N/2 x 400 Gb/s NICs x 0.96 (NVLink is not on the cut)"),
    # Packed leaves of 32 NICs (4 servers), 16 or 8 uplinks of 50 GB/s per leaf: a half of N/64 leaves.
    "fat-tree-2to1": (N, N, 4, N / 64 * 16 * 50 * 0.96, "(N/2)/32 leaves x 16 uplinks x 50 GB/s x 0.96"),
    "fat-tree-4to1": (N, N, 4, N / 64 * 8 * 50 * 0.96, "(N/2)/32 leaves x 8 uplinks x 50 GB/s x 0.96"),
    "gb200-nvl72": (N, N, 2, N / 2 * 900 * 0.802, "one NVSwitch domain, 900 GB/s per GPU x 0.802"),
    "seed-ib": (N, N, 2, N / 2 * 25, "star, 25 GB/s per GPU"),
    "seed-nvlink": (N, N, 2, N / 2 * 300, "star, 300 GB/s per GPU"),
    # Rank halves of a 4x4x4 torus are z < 2 and z >= 2: 16 links between z = 1 and 2, 16 wrap-around.
    "tpu-v4-torus": (None, 64, 6, 32 * 45, "32 z-links x 45 GB/s; diameter 2+2+2"),
    # GPU-router, local, global, local, router-GPU.
    "dragonfly-example": (None, 72, 5, None, "diameter GPU-local-global-local-GPU"),
}


def field(text, label):
    m = re.search(r"^\s*" + re.escape(label) + r"\s+([0-9.]+)", text, re.M)
    if not m:
        sys.exit(f"no '{label}' in:\n{text}")
    return float(m.group(1))


def main():
    memwall, topologies = sys.argv[1], sys.argv[2]
    shipped = sorted(f[:-5] for f in os.listdir(topologies) if f.endswith(".yaml"))
    if sorted(EXPECTED) != shipped:
        sys.exit(f"catalog fabrics {shipped} differ from those checked here {sorted(EXPECTED)}")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (gpus_arg, gpus, diameter, bisection, why) in sorted(EXPECTED.items()):
            dot = os.path.join(tmp, name + ".dot")
            cmd = [memwall, "topo", os.path.join(topologies, name + ".yaml"), "--dot", dot]
            if gpus_arg:
                cmd += ["--gpus", str(gpus_arg)]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if run.returncode != 0:
                failures.append(f"{name}: exit {run.returncode}: {run.stderr.strip()}")
                continue
            got = (field(run.stdout, "GPUs"), field(run.stdout, "diameter (GPU to GPU)"),
                   field(run.stdout, "bisection bound (rank halves)"))
            print(f"{name:18s} GPUs {got[0]:.0f}  diameter {got[1]:.0f} hops  bisection {got[2]:.1f} GB/s  ({why})")
            if got[0] != gpus or got[1] != diameter:
                failures.append(f"{name}: {got[0]:.0f} GPUs, diameter {got[1]:.0f}; expected {gpus}, {diameter}")
            if bisection is not None and abs(got[2] - bisection) > 1e-6 * bisection:
                failures.append(f"{name}: bisection {got[2]} GB/s, expected {bisection} ({why})")
            with open(dot) as f:
                text = f.read()
            gpu_nodes = len(set(re.findall(r'label="(gpu\d+)", shape=box', text)))
            if not text.lstrip().startswith("graph") or gpu_nodes != gpus:
                failures.append(f"{name}: DOT file has {gpu_nodes} GPU nodes, expected {gpus}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
