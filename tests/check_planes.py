#!/usr/bin/env python3
"""Mirror planes (sim/parallel/planes.hpp): where the TP ranks' flows outside the TP rings never meet
and each rank's links copy rank 0's (DGX A100 servers on a rail-optimised fabric: TP rank i's pipeline
sends and data-parallel rings cross only rail i), memwall simulates TP rank 0's flows alone and
records every rank's on its own route. That must be exact: the same job with every flow simulated
gives the same step, breakdown, bytes and energy (relative 1e-12).

Every flow simulated: MEMWALL_SIMULATE_MESSAGES=1, and a link event (a failure hits one plane, so it
disables the mirror). The event here halves a leaf-spine link's bandwidth at t = 0, a link no flow of
these jobs crosses (on a rail-optimised fabric of 4 servers every rail's traffic stays on its leaf), so
the physics is the same run's.
Layouts: TP 8 x PP 2 x DP 2 (zero1, bucketed overlap), TP 8 x PP 2 x CP 2, TP 8 with HSDP (shard
group 2, 2 replica groups), TP 8 x PP 2 x DP 2 with interleaving.

Refused where the planes meet (mirrored_planes 1, and the same numbers): TP 4 x PP 2 x CP 2 x DP 2
(two TP groups per server, whose context ring crosses the NVLinks of their TP rings), and the TP 8 x
PP 2 x DP 2 job on servers with one NIC each (every TP rank's pipeline send leaves through it).

Usage: check_planes.py MEMWALL
"""
import json
import os
import subprocess
import sys
import tempfile

BASE = """name: "{name}"
gpu: A100-80GB
model: {{hidden: 2048, layers: 8, heads: 16, seq_len: 2048, vocab: 32000}}
batch: {{tokens_per_microbatch: 2048, microbatches: 4}}
cluster: {{gpus: 32, fabric: {fabric}{events}}}
parallelism: {parallelism}
training: {training}
"""
EVENT = ", link_events: [{at: 0s, link: leaf0-spine3, bandwidth: 12GB/s}]"
ONE_NIC = ("{kind: cluster, gpus_per_node: 8, nvlink: {bandwidth: 300GB/s, latency: 0.3us}, "
           "nic: {bandwidth: 200Gb/s, latency: 1us}, nics: per-node, leaf_ports: 20}")
CASES = [  # name, parallelism, training, the planes expected mirrored (t, or 1 where they meet)
    ("tp8-pp2-dp2", "{tensor: 8, pipeline: 2}", "{sharding: zero1, overlap: bucketed}", 8),
    ("tp8-pp2-cp2", "{tensor: 8, pipeline: 2, context: 2}", "{sharding: zero1}", 8),
    ("tp8-hsdp2x2", "{tensor: 8}", "{sharding: zero3, shard_group: 2, overlap: bucketed}", 8),
    ("tp8-pp2-vp2-dp2", "{tensor: 8, pipeline: 2, virtual_stages: 2}", "{sharding: none}", 8),
    # Two TP groups per server: the context ring joins them over the NVLinks their TP rings use.
    ("tp4-pp2-cp2-dp2", "{tensor: 4, pipeline: 2, context: 2}", "{sharding: zero1}", 1),
]
SKIP = {"name", "file", "sim_wall_s", "activities_per_s", "mirrored_planes"}


def run(memwall, tmp, name, text, every_message=False):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ, MEMWALL_SIMULATE_MESSAGES="1" if every_message else "0")
    p = subprocess.run([memwall, "run", "--json", path], capture_output=True, text=True, timeout=300, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{name}: exit {p.returncode}: {p.stderr[-400:]}")
    return json.loads(p.stdout)


def differences(a, b, path=""):
    """Every leaf where a and b differ by more than 1e-12 relative (numbers) or at all (the rest)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in SKIP:
                continue
            if k not in a or k not in b:
                yield f"{path}/{k}: only in one"
            else:
                yield from differences(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{path}[{i}]")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if abs(a - b) > 1e-12 * max(abs(a), abs(b)):
            yield f"{path}: {a!r} vs {b!r}"
    elif a != b:
        yield f"{path}: {a!r} vs {b!r}"


def main():
    memwall = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, parallelism, training, t in CASES:
            kw = dict(fabric="dgx-a100-hdr", parallelism=parallelism, training=training)
            mirrored = run(memwall, tmp, name, BASE.format(name=name, events="", **kw))
            every = run(memwall, tmp, name + "-every", BASE.format(name=name, events="", **kw), every_message=True)
            references = [("every message", every)]
            if name == CASES[0][0]:
                references.append(("link event", run(memwall, tmp, name + "-event", BASE.format(name=name, events=EVENT, **kw))))
            for what, ref in references:
                diff = list(differences(mirrored, ref))
                print(f"{name}: mirrored_planes {mirrored['mirrored_planes']} (expected {t}), {what}: "
                      f"{ref['mirrored_planes']}; step {mirrored['step_time_s']:.9e} s vs {ref['step_time_s']:.9e} s; "
                      f"{len(diff)} differences")
                if mirrored["mirrored_planes"] != t or ref["mirrored_planes"] != 1:
                    failures.append(f"{name}: mirrored_planes {mirrored['mirrored_planes']} / {ref['mirrored_planes']}")
                failures += [f"{name} ({what}): {d}" for d in diff[:10]]
        one_nic = run(memwall, tmp, "one-nic", BASE.format(name="one NIC per server", events="", fabric=ONE_NIC,
                                                           parallelism=CASES[0][1], training=CASES[0][2]))
        print(f"one NIC per server: mirrored_planes {one_nic['mirrored_planes']} (expected 1)")
        if one_nic["mirrored_planes"] != 1:
            failures.append("one NIC per server: the planes meet on the NIC but were mirrored")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
