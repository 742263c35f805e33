#!/usr/bin/env python3
"""A link going down mid-run under tensor x pipeline parallelism (issue 28): the model-parallel
engine's flows fail, wait for the fabric to re-route and resend their rest, as the data-parallel
collectives do; where no path avoids the link, the run stops (exit 1) with a report and no result.

Derived checks, on TP 8 x PP 2 x DP 4 over the 2:1 fat-tree (64 GPUs under two leaves; pipeline
sends cross the spines), reroute_delay D = 50 ms:
- every byte arrives: bytes sent per GPU equal the healthy run's;
- a spine link failing while pipeline sends cross it: the step is longer than the healthy one (the
  interrupted sends waited for the new routes) by at most D (they resend at once after it, on a path
  of the same bandwidth);
- the same link failing after the last pipeline send (nothing crosses it any more): the step equals
  the healthy one exactly;
- on a star (a GPU's only link) the run stalls: exit 1, the report names the link, nothing on stdout.

Usage: check_link_events_parallel.py MEMWALL TOPOLOGIES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

D = 0.05
SCENARIO = """name: "TP 8 x PP 2 x DP 4, link events"
gpu: H100-SXM
model: {{hidden: 4096, layers: 32, heads: 32, seq_len: 4096, vocab: 32000, ffn: swiglu, ffn_hidden: 14336, causal: true}}
batch: {{global_batch: 32, micro_batch: 1}}
cluster: {{gpus: 64, fabric: {fabric}{events}}}
parallelism: {{tensor: 8, pipeline: 2, sequence_parallel: true}}
"""
STAR = """name: "TP 2 x PP 2 on a star, a GPU's link down"
gpu: H100-SXM
model: {hidden: 4096, layers: 8, heads: 32, seq_len: 4096, vocab: 32000, ffn: swiglu, ffn_hidden: 14336, causal: true}
batch: {global_batch: 8, micro_batch: 1}
cluster: {gpus: 8, fabric: {kind: star, bandwidth: 25GB/s, latency: 1us}, link_events: [{at: 0.02s, link: gpu000003-link, down: true}]}
parallelism: {tensor: 2, pipeline: 2}
"""


def run(memwall, path, text):
    with open(path, "w") as f:
        f.write(text)
    return subprocess.run([memwall, "run", "--json", path], capture_output=True, text=True, timeout=600)


def main():
    memwall, topologies = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        fabric = os.path.join(tmp, "ft.yaml")
        with open(os.path.join(topologies, "fat-tree-2to1.yaml")) as src, open(fabric, "w") as dst:
            dst.write(src.read() + f"\nreroute_delay: {D * 1000:g}ms\n")
        scenario = os.path.join(tmp, "s.yaml")
        healthy = run(memwall, scenario, SCENARIO.format(fabric=fabric, events=""))
        if healthy.returncode != 0:
            sys.exit(f"healthy run: exit {healthy.returncode}: {healthy.stderr}")
        h = json.loads(healthy.stdout)
        print(f"healthy: step {h['step_time_s']:.6f} s, {h['bytes_sent_per_gpu']:.0f} B per GPU")
        for at, during in ((0.01, True), (0.1, True), (0.2, True), (0.25, False)):
            events = f", link_events: [{{at: {at}s, link: leaf0-spine0, down: true}}]"
            r = run(memwall, scenario, SCENARIO.format(fabric=fabric, events=events))
            if r.returncode != 0:
                failures.append(f"leaf0-spine0 down at {at} s: exit {r.returncode}: {r.stderr.strip()[-300:]}")
                continue
            j = json.loads(r.stdout)
            grew = j["step_time_s"] - h["step_time_s"]
            print(f"leaf0-spine0 down at {at} s: step {j['step_time_s']:.6f} s ({grew * 1e3:+.3f} ms), "
                  f"{j['bytes_sent_per_gpu']:.0f} B per GPU")
            if j["bytes_sent_per_gpu"] != h["bytes_sent_per_gpu"]:
                failures.append(f"down at {at} s: bytes per GPU {j['bytes_sent_per_gpu']} != {h['bytes_sent_per_gpu']}")
            if during and not 0 < grew <= D * (1 + 1e-9):
                failures.append(f"down at {at} s, during the pipeline sends: the step grew by {grew * 1e3:.3f} ms, "
                                f"expected more than 0 and at most the reroute delay {D * 1e3:g} ms")
            if not during and j["step_time_s"] != h["step_time_s"]:
                failures.append(f"down at {at} s, after the last pipeline send: step {j['step_time_s']} != healthy "
                                f"{h['step_time_s']}")
        r = run(memwall, os.path.join(tmp, "star.yaml"), STAR)
        print(f"star, gpu000003-link down: exit {r.returncode}: {r.stderr.strip()[-200:]}")
        if r.returncode != 1 or "stalled" not in r.stderr or "gpu000003-link" not in r.stderr or r.stdout.strip():
            failures.append(f"star: expected exit 1 with a stall report naming the link and no result, got exit "
                            f"{r.returncode}, stdout {r.stdout[:200]!r}, stderr {r.stderr[-300:]!r}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
