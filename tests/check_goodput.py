#!/usr/bin/env python3
"""Goodput over a whole run (issue 31) through the command line, against figures derived here.

  small   a 64-GPU scenario: the table's goodput column, --json's goodput keys (Young's interval from
          the reported checkpoint cost and failure rate, interruptions by kind adding up, N r T within
          3 standard errors, checkpoint bytes 14 B per parameter), the HDF5 /run events of one seed
          (in time order, a restart after every failure, the end at the window's end), the figure.
  llama3  scenarios/goodput/llama3-405b-16k.yaml: interruptions within 10% of the paper's 419 and
          effective training time above 90% (Llama 3, Section 3.3.4), with the rates derived in the file.

Usage: check_goodput.py MEMWALL REPO_ROOT MODE
"""
import json
import math
import os
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*cmd):
    p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=900)
    expect(p.returncode == 0, f"{' '.join(cmd[:3])}: exit {p.returncode}: {p.stderr[-400:]}")
    return p.stdout


SMALL = """name: goodput-small
gpu: A100-80GB
model: {hidden: 2048, layers: 8, seq_len: 2048, vocab: 32000}
batch: {tokens_per_microbatch: 2048, microbatches: 2}
cluster: {gpus: 64, fabric: dgx-a100-hdr}
run: {duration: 20days}
reliability:
  failures:
    gpu: {mtbf: 20000h}
    host: {per_device_hour: 1e-4}
    link: {mtbf: 500000h}
    software: {per_hour: 0.02}
  detection: 5min
  restart: 10min
  seeds: 2000
checkpoint:
  storage: {write: 5GB/s, latency: 2s}
"""


def small(memwall, root):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "small.yaml")
        open(path, "w").write(SMALL)
        table = run(memwall, "run", path)
        expect("[goodput " in table and "interruptions" in table, f"no goodput column in the table: {table!r}")
        r = json.loads(run(memwall, "run", path, "--json"))
        r = r[0] if isinstance(r, list) else r
        g = r["goodput_detail"]
        hours = 20 * 24
        # dgx-a100-hdr: 8 servers of 8 GPUs; devices as the job holds them.
        kinds = {k["kind"]: k for k in g["failures"]}
        expect(kinds["gpu"]["devices"] == 64 and kinds["host"]["devices"] == 8, f"devices: {kinds}")
        expect(kinds["software"]["devices"] == 1, "software is per job")
        links = [k for k in g["failures"] if k["kind"].startswith("link")]
        expect(links and links[0]["effect"] == "restart", f"a cable to a GPU or NIC restarts the job: {links}")
        rate = sum(k["devices"] * k["per_device_hour"] for k in g["failures"] if k["effect"] == "restart")
        expect(abs(rate - (64 / 20000 + 8e-4 + 0.02 + links[0]["devices"] / 500000)) < 1e-12, f"rate {rate}")
        expected = rate * hours
        sem = g["interruptions_sem"]
        expect(abs(sem - math.sqrt(expected / 2000)) < 0.15 * math.sqrt(expected / 2000), f"sem {sem}")
        expect(abs(g["interruptions_mean"] - expected) < 3 * sem,
               f"interruptions {g['interruptions_mean']:.3f}, expected N r T = {expected:.3f} (sem {sem:.3f})")
        expect(abs(sum(k["failures_mean"] for k in g["failures"]) - g["interruptions_mean"]
                   - g["degraded_mean"]) < 1e-9, "interruptions by kind do not add up")
        expect(abs(g["checkpoint_bytes"] - 14 * r["params"]) < 1e-6 * g["checkpoint_bytes"], "checkpoint bytes")
        write = 2 + g["checkpoint_bytes"] / 5e9
        expect(abs(g["checkpoint_write_s"] - write) < 1e-9 * write, f"write {g['checkpoint_write_s']} vs {write}")
        young = math.sqrt(2 * write * 3600 / rate)
        expect(abs(g["young_interval_s"] - young) < 0.01 * young, f"Young {g['young_interval_s']} vs {young}")
        steps = g["checkpoint_interval_steps"]
        expect(steps == max(1, round(young / r["step_time_s"])), f"interval {steps} steps")
        expect(0.5 < g["goodput_mean"] < 1 and r["goodput"] == g["goodput_mean"], "goodput")
        expect(r["run_days_with_failures"] == 20, "a 20-day window")
        # The catalog: Llama 3's Table 5 counts over the devices that failed and 1,296 h.
        default = SMALL.split("reliability:")[0] + "reliability:\n  failures: default\n  seeds: 10\n" + \
            "checkpoint: {storage: {write: 5GB/s}}\n"
        open(path, "w").write(default)
        d = json.loads(run(memwall, "run", path, "--json"))
        d = d[0] if isinstance(d, list) else d
        rates = {k["kind"]: k["per_device_hour"] for k in d["goodput_detail"]["failures"]}
        table5 = {"gpu": 196 / 16384, "hbm": 72 / 16384, "nic": 7 / 16384, "host": 46 / 2048,
                  "link (GPU or NIC cable)": 35 / 32768, "software": 63}
        for kind, per_device in table5.items():
            expect(abs(rates.get(kind, 0) - per_device / 1296) < 1e-9 * per_device / 1296,
                   f"catalog rate of {kind}: {rates.get(kind)}")
        open(path, "w").write(SMALL)
        # One seed's events in the trace.
        h5 = os.path.join(tmp, "small.h5")
        run(memwall, "run", path, "--trace", h5)
        import h5py
        with h5py.File(h5) as f:
            e = f["run/events"][:]
            seed = f["run"].attrs["seed"]
        names = [x.decode() for x in e["event"]]
        expect(seed == 1, f"seed {seed}")
        expect(all(e["t_s"][1:] >= e["t_s"][:-1]), "events out of time order")
        expect(names[-1] == "end" and abs(e["t_s"][-1] - 20 * 86400) < 1e-6, "the run ends at the window's end")
        fails = [i for i, n in enumerate(names) if n == "failure"]
        expect(fails, "no failure in 20 days of the first seed")
        for i in fails:  # the next non-failure event resumes the job (or the window ends)
            j = next(k for k in range(i + 1, len(names)) if names[k] != "failure")
            expect(names[j] in ("resumed", "end"), f"after a failure: {names[j]}")
            expect(e["steps_kept"][j] == e["steps_kept"][i], "a restart goes back to the last written checkpoint")
        # The figure.
        js = os.path.join(tmp, "small.json")
        open(js, "w").write(run(memwall, "run", path, "--json"))
        run(PY, os.path.join(root, "analysis", "plot_goodput.py"), js, "--out", os.path.join(tmp, "g.png"))
        expect(os.path.getsize(os.path.join(tmp, "g.png")) > 10000, "figure")


def llama3(memwall, root):
    r = json.loads(run(memwall, "run", os.path.join(root, "scenarios", "goodput", "llama3-405b-16k.yaml"), "--json"))
    r = r[0] if isinstance(r, list) else r
    g = r["goodput_detail"]
    print(f"Llama 3 405B, 16,384 H100, 54 days: {g['interruptions_mean']:.1f} interruptions (published 419), "
          f"effective training time {100 * g['goodput_mean']:.2f}% (published: above 90%), "
          f"checkpoint every {g['checkpoint_interval_s']:.0f} s, step {r['step_time_s']:.3f} s")
    expect(abs(g["interruptions_mean"] - 419) <= 0.1 * 419, f"interruptions {g['interruptions_mean']}")
    expect(g["goodput_mean"] > 0.90, f"goodput {g['goodput_mean']}")
    expect(g["seeds"] == 1000 and g["days_mean"] == 54, "1,000 seeds of 54 days")


def main():
    memwall, root, mode = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    {"small": small, "llama3": llama3}[mode](memwall, root)
    if failures:
        sys.exit(f"{len(failures)} problem(s)")
    print("ok")


if __name__ == "__main__":
    main()
