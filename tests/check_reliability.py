#!/usr/bin/env python3
"""Reliability regressions (issue 11): no wrong number printed as a result, no crash on bad input,
no unsafe or partial output. One mode per class of failure.

Usage: check_reliability.py MEMWALL MODE
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(memwall, *args, **kwargs):
    return subprocess.run([memwall, *args], capture_output=True, text=True, timeout=120, **kwargs)


SCENARIO = """
name: small
gpu: A100-80GB
model: {hidden: 1024, layers: 2, seq_len: 512, vocab: 1000}
batch: {tokens_per_microbatch: 512, microbatches: 1}
cluster: {gpus: 4, fabric: {kind: star, bandwidth: 25GB/s}}
"""

SWEEP = """
scenario:
  name: small
  gpu: A100-80GB
  model: {hidden: 1024, layers: 2, seq_len: 512, vocab: 1000}
  batch: {tokens_per_microbatch: 512, microbatches: 1}
  cluster: {gpus: 4, fabric: FABRIC}
sweep:
  cluster.gpus: GPUS
  batch.microbatches: [1, 2]
"""


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    open(path, "w").write(text)
    return path


def no_leftovers(tmp, what, keep=()):
    left = [f for f in os.listdir(tmp) if f.endswith(".tmp") and f not in keep]
    expect(not left, f"{what}: temporary files left: {left}")
    scratch = [f for f in os.listdir(tempfile.gettempdir()) if f.startswith("memwall-sweep-")]
    alive = [f for f in scratch if os.path.exists(f"/proc/{f[14:]}")]
    expect(len(alive) == len(scratch), f"{what}: sweep scratch folders of dead processes left: {scratch}")


def full_disk(limit_bytes):
    """A child whose files may not grow past `limit_bytes`: writes fail with EFBIG as on a full disk."""
    def limit():
        import resource
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return limit


def check_output(memwall, tmp):
    """Every write checked: a full disk leaves the previous file (or none) and exits non-zero; targets
    that are not regular files, or in no folder, are bad input before anything runs."""
    scenario = write(tmp, "s.yaml", SCENARIO)
    sweep = write(tmp, "sweep.yaml", SWEEP.replace("FABRIC", "{kind: star, bandwidth: 25GB/s}").replace("GPUS", "[2, 4]"))
    # Full disk: traces, timelines and sweep results.
    for args, target in ((["run", scenario, "--trace"], "t.h5"), (["run", scenario, "--timeline"], "t.json"),
                         (["sweep", sweep, "--out"], "r.csv"), (["sweep", sweep, "--out"], "r.h5")):
        path = os.path.join(tmp, target)
        p = subprocess.run([memwall, *args, path], capture_output=True, text=True, preexec_fn=full_disk(100),
                           timeout=120)
        expect(p.returncode == 1, f"{args[0]} {target} on a full disk: exit {p.returncode}: {p.stderr[-300:]}")
        expect(not os.path.exists(path), f"{args[0]} {target} on a full disk left a partial file")
        expect("cannot write" in p.stderr, f"{args[0]} {target}: no write error reported: {p.stderr[-300:]}")
        no_leftovers(tmp, f"{args[0]} {target} on a full disk")
    # A run that fails after one output was finished leaves neither: the trace is written before the
    # timeline, so a limit between their sizes lets the trace through and stops the timeline.
    trace, timeline = os.path.join(tmp, "both.h5"), os.path.join(tmp, "both.json")
    longer = write(tmp, "longer.yaml", SCENARIO.replace("layers: 2,", "layers: 16,").replace("microbatches: 1", "microbatches: 8"))
    subprocess.run([memwall, "run", longer, "--trace", trace, "--timeline", timeline], capture_output=True,
                   check=True)
    trace_bytes, timeline_bytes = os.path.getsize(trace), os.path.getsize(timeline)
    os.unlink(trace)
    os.unlink(timeline)
    expect(trace_bytes < timeline_bytes, f"test set-up: trace {trace_bytes} B not smaller than timeline {timeline_bytes} B")
    p = subprocess.run([memwall, "run", longer, "--trace", trace, "--timeline", timeline], capture_output=True,
                       text=True, preexec_fn=full_disk((trace_bytes + timeline_bytes) // 2), timeout=120)
    expect(p.returncode == 1, f"trace + timeline, the timeline's write failing: exit {p.returncode}")
    expect(not os.path.exists(trace) and not os.path.exists(timeline),
           f"a run that failed after writing its trace left {[f for f in (trace, timeline) if os.path.exists(f)]}")
    no_leftovers(tmp, "trace written, timeline failed")
    # A previous file survives a failed rewrite.
    results = os.path.join(tmp, "r1.csv")
    subprocess.run([memwall, "sweep", sweep, "--out", results], capture_output=True, check=True)
    out = os.path.join(tmp, "keep.csv")
    subprocess.run([memwall, "merge", "--out", out, results], capture_output=True, check=True)
    before = open(out).read()
    p = subprocess.run([memwall, "merge", "--out", out, results], capture_output=True, text=True,
                       preexec_fn=full_disk(len(before) // 2))
    expect(p.returncode == 1 and open(out).read() == before, "a failed rewrite did not keep the previous file")
    # Targets that are no place for a result: exit 2 before anything runs, nothing replaced.
    fifo = os.path.join(tmp, "fifo.h5")
    os.mkfifo(fifo)
    for args in (["run", scenario, "--trace", fifo], ["run", scenario, "--trace", "/dev/null"],
                 ["run", scenario, "--timeline", "/dev/full"], ["run", scenario, "--trace", tmp],
                 ["run", scenario, "--trace", os.path.join(tmp, "no-such-dir", "t.h5")],
                 ["run", scenario, "--trace", os.path.join(tmp, "t.txt")],
                 ["sweep", sweep, "--out", os.path.join(tmp, "r.txt")], ["sweep", sweep, "--out", "/dev/null"]):
        p = run(memwall, *args)
        expect(p.returncode == 2 and not p.stdout.strip(), f"{args}: exit {p.returncode}, stdout {p.stdout!r}")
        expect(f"{args[-1]}: --" in p.stderr, f"{args}: message does not name the path and option: {p.stderr!r}")
    expect(os.path.exists("/dev/null") and not os.path.isfile("/dev/null"), "/dev/null was replaced")
    no_leftovers(tmp, "bad targets")


def check_parent_killed(memwall, tmp):
    """Killing only the parent (SIGKILL, SIGHUP) takes the simulation child with it."""
    big = write(tmp, "big.yaml", SCENARIO.replace("gpus: 4", "gpus: 4096").replace("microbatches: 1",
                                                                                  "microbatches: 16")
                                            + "steps: 6\n")  # about 4 s on a fast machine: still running at 1 s
    import signal
    import time
    for sig in (signal.SIGKILL, signal.SIGHUP):
        trace = os.path.join(tmp, f"killed-{sig.name}.h5")
        proc = subprocess.Popen([memwall, "run", big, "--trace", trace], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        children = open(f"/proc/{proc.pid}/task/{proc.pid}/children").read().split()
        expect(proc.poll() is None and children, f"{sig.name}: the run finished before it could be killed")
        proc.send_signal(sig)
        proc.wait(timeout=30)
        time.sleep(0.5)
        alive = [c for c in children if os.path.exists(f"/proc/{c}") and
                 open(f"/proc/{c}/stat").read().split()[2] != "Z"]
        expect(not alive, f"parent killed by {sig.name}: simulation child {alive} still running")
        time.sleep(0.5)
        expect(not os.path.exists(trace), f"parent killed by {sig.name}: the trace was written later")
        no_leftovers(tmp, f"parent killed by {sig.name}", keep=[f for f in os.listdir(tmp) if "SIGKILL" in f])


def check_merge(memwall, tmp):
    """merge names missing points and exits 1 (unless --allow-missing), refuses two different results
    for one point, a point outside the sweep and an output that is one of its inputs."""
    sweep = write(tmp, "sweep.yaml", SWEEP.replace("FABRIC", "{kind: star, bandwidth: 25GB/s}").replace(
        "GPUS", "[2, 4, 8]"))
    shards = []
    for k in (1, 2, 3):
        shards.append(os.path.join(tmp, f"s{k}.csv"))
        p = run(memwall, "sweep", sweep, "--shard", f"{k}/3", "--out", shards[-1])
        expect(p.returncode == 0, f"shard {k}: exit {p.returncode}: {p.stderr}")
    out = os.path.join(tmp, "m.csv")
    p = run(memwall, "merge", "--out", out, shards[0], shards[2])  # shard 2 (points 1 and 4) missing
    expect(p.returncode == 1 and "missing" in p.stderr and "1, 4" in p.stderr,
           f"missing shard: exit {p.returncode}: {p.stderr!r}")
    p = run(memwall, "merge", "--allow-missing", "--out", out, shards[0], shards[2])
    expect(p.returncode == 0 and "1, 4" in p.stderr, f"--allow-missing: exit {p.returncode}: {p.stderr!r}")
    p = run(memwall, "merge", "--out", out, *shards)
    expect(p.returncode == 0 and "merged 6 of 6" in p.stderr, f"complete merge: exit {p.returncode}: {p.stderr!r}")
    # Two different results for one point.
    lines = open(shards[0]).read().splitlines()
    forged = write(tmp, "forged.csv", "\n".join([lines[0], lines[1].replace(",ok,", ",ok,", 1)[:-1] + "9"]) + "\n")
    p = run(memwall, "merge", "--out", out, shards[0], forged)
    expect(p.returncode == 2 and "two different results" in p.stderr, f"conflict: exit {p.returncode}: {p.stderr!r}")
    # A stray point outside the sweep, in a merge or in a --resume file.
    cells = lines[1].split(",")
    cells[0] = "99"
    stray = write(tmp, "stray.csv", lines[0] + "\n" + ",".join(cells) + "\n")
    p = run(memwall, "merge", "--out", out, stray)
    expect(p.returncode == 2 and "outside" in p.stderr, f"stray merge: exit {p.returncode}: {p.stderr!r}")
    p = run(memwall, "sweep", sweep, "--resume", "--out", stray)
    expect(p.returncode == 2 and "not a point of" in p.stderr, f"stray resume: exit {p.returncode}: {p.stderr!r}")
    p = run(memwall, "merge", "--out", shards[0], shards[0], shards[1])
    expect(p.returncode == 2 and "also an input" in p.stderr, f"out = input: exit {p.returncode}: {p.stderr!r}")
    no_leftovers(tmp, "merge")


def check_sweep_paths(memwall, tmp):
    """A relative fabric path in a sweep resolves against the sweep file; errors name the sweep file,
    the line of the value and the key, not a scratch file."""
    os.makedirs(os.path.join(tmp, "fabrics"))
    write(tmp, "fabrics/star.yaml", "kind: star\nbandwidth: 25GB/s\n")
    sweep = write(tmp, "sweep.yaml", SWEEP.replace("FABRIC", "fabrics/star.yaml").replace("GPUS", "[2, 0]"))
    out = os.path.join(tmp, "r.csv")
    p = subprocess.run([memwall, "sweep", sweep, "--out", out], capture_output=True, text=True, cwd="/")
    expect(p.returncode == 1, f"sweep: exit {p.returncode}: {p.stderr}")
    import csv
    rows = {int(r["point"]): r for r in csv.DictReader(open(out))}
    expect(rows[0]["status"] == "ok" and rows[1]["status"] == "ok", f"relative fabric path: {rows[0]['error']}")
    line = SWEEP.splitlines().index("  cluster.gpus: GPUS") + 1  # the file starts with an empty line
    expect(rows[2]["error"].startswith(f"{sweep}:{line}: cluster.gpus: "),
           f"error not located in the sweep file (line {line}): {rows[2]['error']!r}")
    expect("memwall-sweep-" not in p.stderr, f"a scratch file is named: {p.stderr!r}")
    no_leftovers(tmp, "sweep paths")


def check_hostile(memwall, tmp):
    """Hostile input: exit 2 with one short line naming a file and line, never a crash or a hang."""
    import re
    hostile = os.path.join(HERE, "hostile")
    loop = os.path.join(tmp, "loop")
    os.makedirs(loop)
    os.symlink("b.yaml", os.path.join(loop, "a.yaml"))
    os.symlink("a.yaml", os.path.join(loop, "b.yaml"))
    fifo = os.path.join(tmp, "fifo.yaml")
    os.mkfifo(fifo)
    huge = write(tmp, "huge-sweep.yaml", "scenario: {name: x}\nsweep:\n" +
                 "".join(f"  k{i}: [{', '.join(str(v) for v in range(100))}]\n" for i in range(5)))
    cases = [["validate", os.path.join(hostile, f)] for f in sorted(os.listdir(hostile))]
    cases += [["topo", os.path.join(HERE, "fabric-refs", "self-reference.yaml")],
              ["validate", loop], ["validate", fifo], ["validate", "/dev/zero"],
              ["sweep", huge, "--out", os.path.join(tmp, "r.csv")],
              ["merge", "--out", os.path.join(tmp, "m.csv"), "/etc/passwd"]]
    for args in cases:
        p = run(memwall, *args)
        err = p.stderr.strip().splitlines()
        expect(p.returncode == 2, f"{args}: exit {p.returncode}: {p.stderr[-300:]!r}")
        expect(len(err) == 1 and len(err[0]) < 400, f"{args}: {len(err)} lines, {len(p.stderr)} chars of error")
        expect(bool(err) and re.match(r"memwall: error: [^:]+(:\d+)?: ", err[0]) is not None,
               f"{args}: the error names no file: {err[:1]}")
        expect("internal error" not in p.stderr, f"{args}: internal error: {p.stderr[:300]!r}")
    expect(not os.path.exists(os.path.join(tmp, "r.csv")), "a refused sweep left a results file")
    # A directory of a good scenario and a symlink loop: the good one validates, the loop is warned of.
    mixed = os.path.join(tmp, "mixed")
    os.makedirs(mixed)
    write(mixed, "good.yaml", SCENARIO)
    os.symlink("loop-b.yaml", os.path.join(mixed, "loop-a.yaml"))
    os.symlink("loop-a.yaml", os.path.join(mixed, "loop-b.yaml"))
    p = run(memwall, "validate", mixed)
    expect(p.returncode == 0 and "good.yaml: ok" in p.stdout, f"validate of a folder with a loop: exit {p.returncode}")
    for name in ("loop-a.yaml", "loop-b.yaml"):
        expect(re.search(rf"memwall: warning: .*{name}: skipped", p.stderr) is not None,
               f"the skipped {name} is not warned of: {p.stderr!r}")
    # Counts on the command line within the input limits, the bound printed plainly.
    fabric = os.path.join(ROOT, "topologies", "dgx-h100-ndr.yaml")
    for gpus in ("0", "131073", "4294967296", "1e400"):
        p = run(memwall, "topo", fabric, "--gpus", gpus)
        expect(p.returncode == 2, f"topo --gpus {gpus}: exit {p.returncode}")
        expect(len(p.stderr) < 300 and not re.search(r"\d{20}", p.stderr),
               f"topo --gpus {gpus}: {p.stderr!r}")
    expect("131072" in run(memwall, "topo", fabric, "--gpus", "0").stderr, "the --gpus limit is not named")
    # Values quoted back are one printable line: no newline, escape or bell reaches the terminal, and a
    # file's contents are never echoed.
    hostile_values = {"gpu": '"\\e[31mA100\\a\\nGB"', "cluster": "{gpus: 4, fabric: /etc/passwd}",
                      "name": "'" + "n" * 5000 + "'"}
    for key, value in hostile_values.items():
        text = re.sub(rf"(?m)^{key}: .*$", lambda m: f"{key}: {value}", SCENARIO)
        p = run(memwall, "validate", write(tmp, f"hostile-{key}.yaml", text))
        err = p.stderr.strip().splitlines()
        expect(key == "name" or p.returncode == 2, f"hostile {key}: exit {p.returncode}")
        expect(len(err) <= 1 and len(p.stderr) < 1500, f"hostile {key}: {len(err)} lines, {len(p.stderr)} chars")
        expect(not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", p.stderr), f"hostile {key}: a control character: {p.stderr!r}")
        expect("root:" not in p.stderr + p.stdout, f"hostile {key}: /etc/passwd echoed: {p.stderr!r}")


MODES = {"hostile": check_hostile, "output": check_output, "parent-killed": check_parent_killed, "merge": check_merge,
         "sweep-paths": check_sweep_paths}


def main():
    memwall, mode = os.path.abspath(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        MODES[mode](memwall, tmp)
    print(f"{mode}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
