#!/usr/bin/env python3
"""Several jobs on one fabric (issue 32), checked against arithmetic derived here:

1. Identical jobs, packed on a non-blocking rail-optimised fabric: each runs exactly as fast as alone,
   and as fast as the same job run as a plain scenario (the single-job engine), for a data-parallel
   job (with and without bucketed overlap) and a tensor x pipeline job.
2. Two 2-GPU rings forced through one shared up-link (a hand-made graph fabric): each flow gets half
   of the link, so each job's all-reduce takes G/B longer than alone (two rounds of G/2 bytes at B/2
   instead of B), G = 2 bytes x (12 d^2 L + 2 V d).
3. A 4:1 fat-tree (one up-link per leaf of 4 one-GPU servers), two 8-GPU all-reduce-bound jobs:
   packed keeps each ring's leaf crossings alone on their up-links (slowdown 1); spread puts two
   rings' flows on every up-link, so the ring's bandwidth term 2(N-1)/N G/B doubles. Spread is never
   faster than packed; the slowdown matches that arithmetic within 2%.
4. Conservation per job: every GPU sends the ring's 2(N-1)/N G; energy = its parts.
5. A job that starts after the other has ended runs as fast as alone; placement by leaf and by pod
   gives jobs whole leaves (pods) of their own; bad placements exit 2.

Usage: check_jobs.py MEMWALL
"""
import json
import os
import subprocess
import sys
import tempfile

D, L, V, SEQ = 4096, 4, 50000, 2048
GRAD_BYTES = 2.0 * (12 * D * D * L + 2 * V * D)
MODEL = f"{{hidden: {D}, layers: {L}, seq_len: {SEQ}, vocab: {V}}}"


def job(name, gpus, extra=""):
    return (f"  - name: {name}\n    gpu: A100-80GB\n    model: {MODEL}\n"
            f"    batch: {{tokens_per_microbatch: {SEQ}, microbatches: 1}}\n"
            f"    cluster: {{gpus: {gpus}, collective: ring}}\n{extra}")


def run(memwall, folder, name, text, json_out=True):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([memwall, "run"] + (["--json"] if json_out else []) + [path], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{name}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout) if json_out else p.stdout


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def main():
    memwall = sys.argv[1]
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        # 1. Non-blocking, packed: exactly as alone, and as the single-job engine.
        layouts = {
            "dp": "",
            "dp-overlap": "    training: {overlap: bucketed, bucket: 50MB}\n",
            "tp-pp": "    parallelism: {tensor: 4, pipeline: 2}\n    batch: {global_batch: 8, micro_batch: 1}\n",
        }
        for label, extra in layouts.items():
            body = extra.replace("    batch: {global_batch: 8, micro_batch: 1}\n", "")
            batch_line = "    batch: {global_batch: 8, micro_batch: 1}\n" if "global_batch" in extra else None
            def item(name):
                text = job(name, 16, body)
                if batch_line:
                    text = text.replace(f"    batch: {{tokens_per_microbatch: {SEQ}, microbatches: 1}}\n", batch_line)
                return text
            out = run(memwall, tmp, f"nb-{label}.yaml",
                      f"name: non-blocking\ncluster: {{gpus: 32, fabric: dgx-h100-ndr}}\njobs:\n{item('a')}{item('b')}")
            plain_text = ("name: alone\n" + "\n".join(l[4:] for l in item("a").splitlines()[1:])
                          .replace("cluster: {gpus: 16, collective: ring}",
                                   "cluster: {gpus: 16, collective: ring, fabric: dgx-h100-ndr}") + "\n")
            plain = run(memwall, tmp, f"plain-{label}.yaml", plain_text)
            for r in out["jobs"]:
                if r["slowdown"] != 1.0:
                    problems.append(f"{label}: job {r['job']} slowdown {r['slowdown']!r} on a non-blocking fabric, packed")
                if not close(r["step_time_s"], plain["step_time_s"], 1e-9):
                    problems.append(f"{label}: job {r['job']} step {r['step_time_s']} s, the same job as a plain "
                                    f"scenario {plain['step_time_s']} s")
            print(f"non-blocking packed {label}: step {out['jobs'][0]['step_time_s']:.6f} s, plain "
                  f"{plain['step_time_s']:.6f} s, slowdowns {[r['slowdown'] for r in out['jobs']]}")

        # 2. One shared up-link: leaf0 - spine - leaf1, job a on g0,g2 and b on g1,g3.
        B = 100e9
        fabric = ("{kind: graph, nodes: [{name: g0, kind: gpu}, {name: g1, kind: gpu}, {name: g2, kind: gpu}, "
                  "{name: g3, kind: gpu}, {name: leaf0, kind: switch}, {name: leaf1, kind: switch}, "
                  "{name: spine, kind: switch}], links: [{a: g0, b: leaf0, bandwidth: 100GB/s, latency: 1us}, "
                  "{a: g1, b: leaf0, bandwidth: 100GB/s, latency: 1us}, {a: g2, b: leaf1, bandwidth: 100GB/s, latency: 1us}, "
                  "{a: g3, b: leaf1, bandwidth: 100GB/s, latency: 1us}, {a: leaf0, b: spine, bandwidth: 100GB/s, latency: 1us}, "
                  "{a: leaf1, b: spine, bandwidth: 100GB/s, latency: 1us}]}")
        out = run(memwall, tmp, "uplink.yaml",
                  f"name: shared up-link\ncluster: {{gpus: 4, fabric: {fabric}}}\njobs:\n"
                  + job("a", 2, "    placement: explicit\n    servers: [0, 2]\n")
                  + job("b", 2, "    placement: explicit\n    servers: [1, 3]\n"))
        # Its trace: the shared up-link has one /links row per job, each carrying that job's two
        # rounds of G/2 and busy for them at half the link's rate (2 x (G/2) / (B/2) = 2G/B, plus the
        # route's latency); the timeline names each job's processes.
        trace, timeline = os.path.join(tmp, "uplink.h5"), os.path.join(tmp, "uplink.json")
        p = subprocess.run([memwall, "run", os.path.join(tmp, "uplink.yaml"), "--trace", trace, "--timeline", timeline,
                            "--trace-level", "message"], capture_output=True, text=True)
        if p.returncode != 0:
            problems.append(f"uplink trace: exit {p.returncode}: {p.stderr}")
        else:
            import h5py
            with h5py.File(trace, "r") as f:
                links = f["links"][()]
            rows = [l for l in links if l["name"].decode().startswith("leaf0--spine_")]
            ups = [l for l in rows if l["name"].decode().endswith("_UP") == (rows[0]["name"].decode().endswith("_UP"))]
            if sorted(int(l["job"]) for l in ups) != [0, 1]:
                problems.append(f"uplink trace: leaf0-spine rows {[(l['name'], l['job']) for l in rows]}, one per job wanted")
            for l in ups:
                if not close(l["bytes_carried"], GRAD_BYTES, 1e-9):
                    problems.append(f"uplink trace: job {l['job']} carried {l['bytes_carried']} B over the up-link, G = {GRAD_BYTES}")
                if not close(l["busy_s"], 2 * GRAD_BYTES / B, 1e-3):
                    problems.append(f"uplink trace: job {l['job']} busy {l['busy_s']} s on the up-link, 2G/B = {2 * GRAD_BYTES / B}")
            names = {e["args"]["name"] for e in json.load(open(timeline))["traceEvents"] if e.get("name") == "process_name"}
            if not {"a: GPUs", "b: GPUs", "a: communication", "b: power (W)"} <= names:
                problems.append(f"uplink timeline: processes {sorted(names)}")
            print(f"shared up-link trace: {len(ups)} job rows on leaf0-spine, {[round(l['busy_s'] * 1e3, 4) for l in ups]} ms busy "
                  f"(derived {2 * GRAD_BYTES / B * 1e3:.4f} ms)")
        # --breakdown: one row per job, --json's breakdown (4 significant digits printed).
        p = subprocess.run([memwall, "run", "--breakdown", os.path.join(tmp, "uplink.yaml")], capture_output=True,
                           text=True)
        rows = [l.split() for l in p.stdout.splitlines()[2:]]
        members = ["compute_s", "tp_s", "cp_s", "ep_s", "pp_transfer_s", "pp_bubble_s", "dp_s", "optimizer_s", "wait_s"]
        for r, row in zip(out["jobs"], rows):
            want = [r["step_time_s"]] + [r["breakdown"][k] for k in members]
            if p.returncode != 0 or row[0] != r["job"] or any(abs(float(x) - w) > 1e-3 * max(abs(w), 1e-12)
                                                               for x, w in zip(row[1:], want)):
                problems.append(f"--breakdown row {row} differs from --json {r['job']} {want}")
        if len(rows) != len(out["jobs"]):
            problems.append(f"--breakdown printed {len(rows)} job rows: {p.stdout!r} {p.stderr!r}")
        for r in out["jobs"]:
            extra_s = (r["step_time_s"] - r["alone_step_time_s"])
            if not close(extra_s, GRAD_BYTES / B, 1e-9):
                problems.append(f"shared up-link: job {r['job']} step grew by {extra_s} s, derived G/B = {GRAD_BYTES / B} s")
            print(f"shared up-link: job {r['job']} +{extra_s * 1e3:.6f} ms (derived G/B {GRAD_BYTES / B * 1e3:.6f} ms)")

        # 3. 4:1 fat-tree, packed vs spread.
        fat = ("{kind: cluster, gpus_per_node: 1, nvlink: {bandwidth: 450GB/s, latency: 1us}, "
               "nic: {bandwidth: 100GB/s, latency: 1us}, leaf_ports: 4, oversubscription: 4}")
        n = 8
        results = {}
        for placement in ("packed", "spread"):
            out = run(memwall, tmp, f"fat-{placement}.yaml",
                      f"name: fat-tree {placement}\ncluster: {{gpus: 16, fabric: {fat}}}\nplacement: {placement}\n"
                      f"jobs:\n{job('a', n)}{job('b', n)}")
            results[placement] = out
        ring_s = 2 * (n - 1) / n * GRAD_BYTES / B
        for p, q in zip(results["packed"]["jobs"], results["spread"]["jobs"]):
            if q["step_time_s"] < p["step_time_s"] * (1 - 1e-12):
                problems.append(f"fat-tree: job {p['job']} spread {q['step_time_s']} s faster than packed {p['step_time_s']} s")
            if p["slowdown"] != 1.0:
                problems.append(f"fat-tree packed: job {p['job']} slowdown {p['slowdown']}, derived 1")
            derived = (q["alone_step_time_s"] + ring_s) / q["alone_step_time_s"]
            if not close(q["slowdown"], derived, 0.02):
                problems.append(f"fat-tree spread: job {q['job']} slowdown {q['slowdown']:.4f}, derived {derived:.4f}")
            print(f"fat-tree 4:1 job {p['job']}: packed {p['slowdown']:.4f}, spread {q['slowdown']:.4f} "
                  f"(derived {derived:.4f})")
            # 4. Conservation per job.
            for r in (p, q):
                if not close(r["bytes_sent_per_gpu"], ring_s * B, 1e-9):
                    problems.append(f"job {r['job']}: {r['bytes_sent_per_gpu']} B sent per GPU, ring 2(N-1)/N G = {ring_s * B}")
                parts = r["e_arith_j"] + r["e_hbm_j"] + r["e_network_j"] + r["e_static_j"]
                if not close(r["energy_j"], parts, 1e-9):
                    problems.append(f"job {r['job']}: energy {r['energy_j']} J, its parts {parts} J")

        # 3b. The catalog's 2:1 fat-tree (8 GPUs and NICs per server, 4 servers per leaf, 16 up-links
        # per leaf), four 16-GPU jobs. Packed: each job's two servers share a leaf (no up-link). Spread:
        # job j on servers j and j+4 (two leaves); each job's 8 channel rings (one per rail) send one
        # flow up each leaf: 8 up-flows alone (16 up-links: full rate), 32 together (two per up-link:
        # half the NIC rate), so the NIC-bound term 2(N-1)/N (G/8) / (400 Gb/s x 0.96) doubles.
        nic_bytes_per_s = 400e9 / 8 * 0.96
        n2 = 16
        four = "".join(job(name, n2) for name in "abcd")
        got = {p: run(memwall, tmp, f"ft21-{p}.yaml", f"name: 2:1 {p}\ncluster: {{gpus: 64, fabric: fat-tree-2to1}}\n"
                      f"placement: {p}\njobs:\n{four}") for p in ("packed", "spread")}
        ring2_s = 2 * (n2 - 1) / n2 * GRAD_BYTES / 8 / nic_bytes_per_s
        for p, q in zip(got["packed"]["jobs"], got["spread"]["jobs"]):
            derived = (q["alone_step_time_s"] + ring2_s) / q["alone_step_time_s"]
            if q["step_time_s"] < p["step_time_s"] * (1 - 1e-12) or p["slowdown"] != 1.0:
                problems.append(f"fat-tree-2to1: job {p['job']} packed {p['step_time_s']} s (slowdown {p['slowdown']}), "
                                f"spread {q['step_time_s']} s")
            if not close(q["slowdown"], derived, 0.02):
                problems.append(f"fat-tree-2to1 spread: job {q['job']} slowdown {q['slowdown']:.4f}, derived {derived:.4f}")
            print(f"fat-tree-2to1 job {p['job']}: packed {p['slowdown']:.4f}, spread {q['slowdown']:.4f} "
                  f"(derived {derived:.4f})")

        # 5. A job that starts once the other has ended meets nobody.
        late = results["spread"]["jobs"][0]["step_time_s"] * 2
        out = run(memwall, tmp, "late.yaml",
                  f"name: late\ncluster: {{gpus: 16, fabric: {fat}}}\nplacement: spread\n"
                  f"jobs:\n{job('a', n)}{job('b', n, f'    start: {late}s' + chr(10))}")
        for r in out["jobs"]:  # the same phases dated from a later start: equal up to the clock's last bits
            if abs(r["slowdown"] - 1.0) > 1e-12:
                problems.append(f"late start: job {r['job']} slowdown {r['slowdown']}, derived 1 (never concurrent)")
        if out["cluster"]["makespan_s"] != late + out["jobs"][1]["step_time_s"]:
            problems.append(f"late start: cluster ends at {out['cluster']['makespan_s']} s, expected start + step")
        text = run(memwall, tmp, "late-table.yaml",
                   f"name: late\ncluster: {{gpus: 16, fabric: {fat}}}\nplacement: spread\n"
                   f"jobs:\n{job('a', n)}{job('b', n, f'    start: {late}s' + chr(10))}", json_out=False)
        if text.count("\n") != 5 or "slowdown" not in text:
            problems.append(f"the table is not a header, two job rows and the cluster line:\n{text}")
        # 5b. Placement by leaf (fat-tree-2to1: 32 NIC ports per leaf, 8 NICs per server: servers 4l..4l+3
        # on leaf l). Three 3-server jobs: by server, b takes 3-5 and straddles leaves 0 and 1, where
        # spread c (6, 9, 12) meets it; by leaf, packed jobs get whole leaves of their own and spread c
        # takes one server per free leaf in turn, so no two jobs share a leaf: every slowdown is 1.
        three = "".join(job(name, 24, "    placement: spread\n" if name == "c" else "") for name in "abc")
        placed = {}
        for unit in ("server", "leaf"):
            placed[unit] = run(memwall, tmp, f"unit-{unit}.yaml", f"name: by {unit}\ncluster: {{gpus: 128, fabric: "
                               f"fat-tree-2to1}}\nplacement_unit: {unit}\njobs:\n{three}")
        servers = {u: [r["servers"] for r in placed[u]["jobs"]] for u in placed}
        if servers["server"] != [[0, 1, 2], [3, 4, 5], [6, 9, 12]] or servers["leaf"] != [[0, 1, 2], [4, 5, 6], [8, 9, 12]]:
            problems.append(f"placement units: servers {servers}")
        leaves = [{s // 4 for s in ss} for ss in servers["leaf"]]
        if any(leaves[i] & leaves[k] for i in range(3) for k in range(i + 1, 3)):
            problems.append(f"placement by leaf: jobs share leaves {leaves}")
        if [r["slowdown"] for r in placed["leaf"]["jobs"]] != [1.0, 1.0, 1.0]:
            problems.append(f"placement by leaf: slowdowns {[r['slowdown'] for r in placed['leaf']['jobs']]}, 1 expected")
        print("placement by server: slowdowns " + ", ".join(f"{r['slowdown']:.3f}" for r in placed["server"]["jobs"]) +
              "; by leaf: " + ", ".join(f"{r['slowdown']:.3f}" for r in placed["leaf"]["jobs"]))

        # 5c. Placement by pod: a three-tier fat-tree of one-GPU servers, 2 per leaf, pods of 2 leaves
        # (4 servers) with their own spines, joined only through core switches. Two packed 6-server
        # jobs: by leaf they take leaves 0-2 and 3-5 and meet in pod 1 (leaves 2 and 3); by pod they
        # take pods 0-1 and 2-3 whole (servers 0-5 and 8-13) and share no link at all (cores join
        # pods through each pod's own spine links): slowdown exactly 1. A spread 4-server job then
        # takes one server from each free pod in turn: 16, 20, 24, 28.
        fat3 = ("{kind: cluster, gpus_per_node: 1, nvlink: {bandwidth: 450GB/s, latency: 1us}, "
                "nic: {bandwidth: 100GB/s, latency: 1us}, leaf_ports: 2, oversubscription: 1, "
                "tiers: 3, pod_leaves: 2, core_oversubscription: 2}")
        pods = {}
        for unit in ("leaf", "pod"):
            spread_c = job("c", 4, "    placement: spread\n") if unit == "pod" else ""
            pods[unit] = run(memwall, tmp, f"pod-{unit}.yaml", f"name: by {unit}\ncluster: {{gpus: 32, fabric: {fat3}}}\n"
                             f"placement_unit: {unit}\njobs:\n{job('a', 6)}{job('b', 6)}{spread_c}")
        got = {u: [r["servers"] for r in pods[u]["jobs"]] for u in pods}
        if got["leaf"] != [list(range(0, 6)), list(range(6, 12))] or \
                got["pod"] != [list(range(0, 6)), list(range(8, 14)), [16, 20, 24, 28]]:
            problems.append(f"placement by pod: servers {got}")
        if [r["slowdown"] for r in pods["pod"]["jobs"]] != [1.0, 1.0, 1.0]:
            problems.append(f"placement by pod: slowdowns {[r['slowdown'] for r in pods['pod']['jobs']]}, 1 expected")
        print("three tiers, by leaf: slowdowns " + ", ".join(f"{r['slowdown']:.3f}" for r in pods["leaf"]["jobs"]) +
              "; by pod: " + ", ".join(f"{r['slowdown']:.3f}" for r in pods["pod"]["jobs"]))

        # 6. A sweep over placement and fabric (scenarios/jobs-sweep-placement.yaml): a row per point
        # with each job's columns; packed, and anything on the non-blocking fabric, runs as alone;
        # spread and random on the 2:1 fat-tree never beat packed.
        import csv
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        sweep_out = os.path.join(tmp, "sweep.csv")
        p = subprocess.run([memwall, "sweep", os.path.join(root, "scenarios", "jobs-sweep-placement.yaml"), "--out",
                            sweep_out], capture_output=True, text=True)
        if p.returncode != 0:
            problems.append(f"jobs sweep: exit {p.returncode}: {p.stderr}")
        else:
            rows = list(csv.DictReader(open(sweep_out)))
            packed = {r["cluster.fabric"]: float(r["job1_step_time_s"]) for r in rows if r["placement"] == "packed"}
            for r in rows:
                slowdowns = [float(r[f"job{j}_slowdown"]) for j in range(1, 5)]
                if (r["placement"] == "packed" or r["cluster.fabric"] == "dgx-h100-ndr") and slowdowns != [1.0] * 4:
                    problems.append(f"jobs sweep point {r['point']}: slowdowns {slowdowns}, 1 expected")
                if float(r["job1_step_time_s"]) < packed[r["cluster.fabric"]] * (1 - 1e-12):
                    problems.append(f"jobs sweep point {r['point']}: {r['placement']} faster than packed")
            print(f"jobs sweep: {len(rows)} points, slowdowns " +
                  ", ".join(f"{r['placement']}/{r['cluster.fabric']} {float(r['job1_slowdown']):.3f}" for r in rows))
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
