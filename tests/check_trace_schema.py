#!/usr/bin/env python3
"""A trace holds exactly what docs/trace-schema.md says: root attributes, datasets, their columns and
units, and /summary's attributes (the `--json` record's scalar members plus breakdown_*). Also: every
message of every kind is in /comms (per GPU, its bytes there = its bytes_sent), collective ids tell
calls apart, link names decode to text.

Usage: check_trace_schema.py MEMWALL REPO_ROOT
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

SCENARIOS = {
    "dp": """name: schema dp
gpu: H100-SXM
model: {hidden: 1024, layers: 4, heads: 16, seq_len: 1024, vocab: 32000}
batch: {global_batch: 32, micro_batch: 1}
cluster: {gpus: 16, fabric: dgx-h100-ndr}
training: {sharding: zero1, overlap: bucketed, bucket: 4MB}
""",
    "mp": """name: schema mp
gpu: H100-SXM
model: {hidden: 1024, layers: 4, heads: 16, seq_len: 1024, vocab: 32000,
        moe: {experts: 4, top_k: 2, expert_ffn_hidden: 2048}}
batch: {global_batch: 16, micro_batch: 1}
cluster: {gpus: 32, fabric: dgx-h100-ndr}
parallelism: {tensor: 2, pipeline: 2, context: 2, expert: 2}
run: {duration: 30days}
reliability: {failures: {gpu: {mtbf: 1000h}, software: {per_hour: 0.1}}, seeds: 20}
checkpoint: {storage: {write: 5GB/s}}
""",
}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


OPTIONAL = {}  # section -> what a scenario needs for it: '## /run/events (scenarios with `checkpoint:`)'


def parse_schema(path):
    """{section: {name: unit or None}}: '## Root attributes', '## /phases', '### /summary/per_gpu';
    items are '- `a` (unit), `b` (unit): ...' lines."""
    schema, section = {}, None
    for line in open(path):
        m = re.match(r"^#{2,3} (.+)$", line.strip())
        if m:
            section = m.group(1).strip()
            when = re.match(r"^(/\S+) \(scenarios with `([a-z_]+):`\)$", section)
            if when:
                section = when.group(1)
                OPTIONAL[section] = when.group(2) + ":"
            schema[section] = {}
            continue
        if section and line.startswith("- `"):
            for m in re.finditer(r"`([a-z_0-9]+)` \(", line):  # `name` (unit, parentheses balanced)
                depth, i = 1, m.end()
                while i < len(line) and depth:
                    depth += {"(": 1, ")": -1}.get(line[i], 0)
                    i += 1
                schema[section][m.group(1)] = line[m.end():i - 1]
    return schema


JOBS = """name: schema jobs
cluster: {gpus: 32, fabric: dgx-h100-ndr}
placement: spread
jobs:
  - {name: dp, gpu: H100-SXM, model: {hidden: 1024, layers: 4, heads: 16, seq_len: 1024, vocab: 32000},
     batch: {global_batch: 16, micro_batch: 1}, cluster: {gpus: 16}}
  - {name: mp, gpu: H100-SXM, model: {hidden: 1024, layers: 4, heads: 16, seq_len: 1024, vocab: 32000},
     batch: {global_batch: 8, micro_batch: 1}, cluster: {gpus: 16}, parallelism: {tensor: 2, pipeline: 2},
     start: 1ms}
"""


def check_jobs_trace(memwall, tmp, schema):
    """A jobs file's trace: the documented tables and columns, every table with both jobs' rows, /summary
    the cluster's figures and the jobs' records; returns its root attributes."""
    path, trace = os.path.join(tmp, "jobs.yaml"), os.path.join(tmp, "jobs.h5")
    open(path, "w").write(JOBS)
    p = subprocess.run([memwall, "run", "--json", path, "--trace", trace], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"jobs: exit {p.returncode}: {p.stderr}")
    out = json.loads(p.stdout)
    with h5py.File(trace, "r") as f:
        attrs = set(f.attrs)
        if attrs - set(schema["Root attributes"]) or "jobs" not in attrs:
            fail(f"jobs: root attributes {sorted(attrs)} against the schema's")
        datasets = []
        f.visititems(lambda n, o: datasets.append(n) if isinstance(o, h5py.Dataset) else None)
        for name in datasets:
            cols, doc = set(f[name].dtype.names), set(schema["/" + name])
            if cols != doc:
                fail(f"jobs: /{name} has {sorted(cols - doc)} not documented, lacks {sorted(doc - cols)}")
            if set(np.unique(f[name]["job"])) != {0, 1}:
                fail(f"jobs: /{name} has jobs {np.unique(f[name]['job'])}, expected 0 and 1")
        want = {k for k, v in out["cluster"].items() if not isinstance(v, dict)} | {"jobs"}
        if set(f["summary"].attrs) != want:
            fail(f"jobs: /summary attributes {sorted(f['summary'].attrs)}, expected {sorted(want)}")
        records = json.loads(f["summary"].attrs["jobs"])
        if [r["name"] for r in records] != ["dp", "mp"]:
            fail(f"jobs: /summary jobs names {[r['name'] for r in records]}")
        phases = f["phases"][()]
        late = phases[phases["job"] == 1]
        if late["t_start_s"].min() < 1e-3 - 1e-12:
            fail(f"jobs: the job that starts at 1 ms has a row from {late['t_start_s'].min()} s")
    print(f"jobs: {len(datasets)} datasets with a job column, as documented")
    return attrs


def main():
    memwall, root = sys.argv[1], sys.argv[2]
    schema = parse_schema(os.path.join(root, "docs", "trace-schema.md"))
    with tempfile.TemporaryDirectory() as tmp:
        seen_attrs = set()
        for label, text in SCENARIOS.items():
            scenario, trace = os.path.join(tmp, label + ".yaml"), os.path.join(tmp, label + ".h5")
            open(scenario, "w").write(text)
            p = subprocess.run([memwall, "run", "--json", scenario, "--trace", trace], capture_output=True, text=True)
            if p.returncode != 0:
                fail(f"{label}: exit {p.returncode}: {p.stderr}")
            record = json.loads(p.stdout)
            record = record[0] if isinstance(record, list) else record
            with h5py.File(trace, "r") as f:
                attrs = set(f.attrs)
                seen_attrs |= attrs
                extra = attrs - set(schema["Root attributes"])
                if extra:
                    fail(f"{label}: root attributes {sorted(extra)} are not in docs/trace-schema.md")
                datasets = []
                f.visititems(lambda n, o: datasets.append(n) if isinstance(o, h5py.Dataset) else None)
                for name in datasets:
                    section = "/" + name
                    if section not in schema:
                        fail(f"{label}: dataset {section} is not in docs/trace-schema.md")
                    d = f[name]
                    cols, doc = set(d.dtype.names), set(schema[section])
                    if cols != doc:
                        fail(f"{label}: {section} has {sorted(cols - doc)} not documented, documents "
                             f"{sorted(doc - cols)} not there")
                    for c in cols:
                        unit = d.attrs.get("unit_" + c, "")
                        unit = unit.decode() if isinstance(unit, bytes) else unit
                        if (unit or "text") != schema[section][c]:
                            fail(f"{label}: {section}.{c} has unit {unit!r}, the schema says {schema[section][c]!r}")
                    if "description" not in d.attrs:
                        fail(f"{label}: {section} has no description")
                for section in schema:
                    needed = section.startswith("/") and section != "/summary" and OPTIONAL.get(section, "") in text
                    if needed and section[1:] not in datasets:
                        fail(f"{label}: docs/trace-schema.md lists {section}, the trace has none")
                want = {k for k, v in record.items() if not isinstance(v, (dict, list))}
                want |= {"breakdown_" + k for k in record["breakdown"]}
                got = set(f["summary"].attrs)
                if got != want:
                    fail(f"{label}: /summary attributes {sorted(got - want)} not in --json, {sorted(want - got)} missing")
                fabric = f.attrs["fabric"]
                fabric = fabric.decode() if isinstance(fabric, bytes) else fabric
                # The fabric as built: dgx-h100-ndr's uplinks run at its NICs' 400 Gb/s (once "bandwidth: 0").
                if "uplink: {bandwidth: 50000000000," not in fabric:
                    fail(f"{label}: resolved fabric's uplink is not the NIC's 50 GB/s: {fabric}")
                comms, per_gpu = f["comms"][()], f["summary/per_gpu"][()]
                sent = np.bincount(comms["src_gpu"], weights=comms["bytes"], minlength=len(per_gpu))
                if not np.allclose(sent, per_gpu["bytes_sent"], rtol=1e-9, atol=0):
                    worst = int(np.argmax(np.abs(sent - per_gpu["bytes_sent"])))
                    fail(f"{label}: GPU {worst} sent {per_gpu['bytes_sent'][worst]} B, /comms has {sent[worst]} B")
                kinds = {v: k for k, v in h5py.check_enum_dtype(comms.dtype["kind"]).items()}
                present = {kinds[int(k)] for k in np.unique(comms["kind"])}
                expected = {"dp": {"reducescatter", "allgather"}, "mp": {"tp_comm", "cp_comm", "ep_comm", "pp_send", "reducescatter",
                                                          "allgather"}}[label]
                if present != expected:
                    fail(f"{label}: /comms kinds {sorted(present)}, expected {sorted(expected)}")
                ids = np.unique(comms["collective_id"])
                if len(ids) < 2 or ids[0] != 0 or ids[-1] != len(ids) - 1:
                    fail(f"{label}: collective ids {ids[:5]}... not numbered 0..n-1 with several calls")
                for i in ids[:50]:  # one kind per call
                    if len(np.unique(comms["kind"][comms["collective_id"] == i])) != 1:
                        fail(f"{label}: collective {i} mixes kinds")
                sys.path.insert(0, os.path.join(root, "analysis"))
                from trace_io import Trace
                t = Trace(trace)
                if not t.link_names or not all(isinstance(n, str) and n for n in t.link_names):
                    fail(f"{label}: link names {t.link_names[:3]} are not text")
            print(f"{label}: {len(datasets)} datasets, {len(comms)} messages of {sorted(present)}, "
                  f"{len(ids)} collective calls, as documented")
        seen_attrs |= check_jobs_trace(memwall, tmp, schema)
        missing = set(schema["Root attributes"]) - seen_attrs
        if missing:
            fail(f"docs/trace-schema.md lists root attributes {sorted(missing)} that no trace has")
    print("ok")


if __name__ == "__main__":
    main()
