#!/usr/bin/env python3
"""A seeded mutation fuzzer of memwall's inputs: scenario, fabric, sweep and plan files.

Each mutant of a shipped file goes through `memwall validate` (scenarios, sweeps), `memwall topo`
(fabrics) or `memwall plan --top 1` (plans); a scenario that validates is also run. Whatever the input, memwall must exit 0 or 2 (never
1, an internal error, on input; never a signal), name a file in its error, and stay within the time
and memory bounds. Failing mutants are kept in --keep DIR to reproduce them.

Usage: fuzz_inputs.py MEMWALL [--seconds 120] [--seed 1] [--keep DIR]
"""
import argparse
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HOSTILE_VALUES = ["0", "-1", "1e9", "1e-324", "5e-324s", "inf", "nan", ".nan", "-.inf", "''", "[]", "{}", "~",
                  "9223372036854775807", "18446744073709551616", "1e400GB/s", "0GB/s", "1e30TFLOP/s", "1.5",
                  "x" * 5000, "/etc/passwd", "/dev/zero", ".", "..", "&a [*a]", "[1, [2, [3]]]", "true",
                  "4294967296", "65537", "-0", "0x10", "1_000", "'\\0'", "!!binary AAAA", "*undefined"]
HOSTILE_LINES = ["[a]: 1", "{x: 1}: 2", "? [k]\n: v", "<<: *nothing", "%YAML 9.9", "---\n---", "\t- tab",
                 "key: [unclosed", "'quote"]
MEMORY_LIMIT_BYTES = 8 << 30
TIME_LIMIT_S = 30


def seeds():
    """(kind, path) of the shipped inputs to mutate."""
    out = []
    for folder in ("scenarios/worked-example", "scenarios/what-if", "tests/link-failures"):
        for f in sorted(os.listdir(os.path.join(ROOT, folder))):
            if f.endswith(".yaml"):
                out.append(("scenario", os.path.join(ROOT, folder, f)))
    for f in sorted(os.listdir(os.path.join(ROOT, "topologies"))):
        if f.endswith(".yaml"):
            out.append(("fabric", os.path.join(ROOT, "topologies", f)))
    out.append(("sweep", os.path.join(ROOT, "scenarios", "batch-squeeze.yaml")))
    out.append(("sweep", os.path.join(ROOT, "scenarios", "scale-out-study.yaml")))
    for f in ("01-gpt-1p7b-32gpu.yaml", "02-gpt-3p6b-64gpu.yaml"):
        out.append(("plan", os.path.join(ROOT, "scenarios", "plan-megatron", f)))
    return out


def mutate(text, rng):
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(7)
        i = rng.randrange(len(lines)) if lines else 0
        if op == 0 and lines:  # a value replaced by a hostile one
            m = re.search(r"(:\s*|\[|,\s*|-\s+)([^,\[\]{}:#\s][^,\[\]{}#]*)", lines[i])
            if m:
                lines[i] = lines[i][:m.start(2)] + rng.choice(HOSTILE_VALUES) + lines[i][m.end(2):]
        elif op == 1 and lines:
            del lines[i]
        elif op == 2 and lines:
            lines.insert(i, lines[i])
        elif op == 3 and len(lines) > 1:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 4:
            lines.insert(i, rng.choice(HOSTILE_LINES))
        elif op == 5 and lines:
            lines = lines[:i]
        elif op == 6 and lines and lines[i]:
            k = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:k] + rng.choice("{}[]:,-'\"&*!|>%@` \t0") + lines[i][k + 1:]
    return "\n".join(lines) + "\n"


# Under AddressSanitizer an address-space limit cannot work (ASan reserves terabytes of shadow
# address space at start): --sanitized checks each run's peak resident memory afterwards instead.
SANITIZED = False


def limits():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def peak_child_rss_bytes():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def check(cmd, path):
    """A problem with this memwall invocation, or None."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIME_LIMIT_S, preexec_fn=limits,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return f"no answer within {TIME_LIMIT_S} s"
    if SANITIZED and peak_child_rss_bytes() > MEMORY_LIMIT_BYTES:
        return f"peak memory {peak_child_rss_bytes() / 2**30:.1f} GiB over {MEMORY_LIMIT_BYTES / 2**30:.0f} GiB"
    if p.returncode < 0:
        return f"killed by signal {-p.returncode}: {p.stderr[-300:]!r}"
    if p.returncode not in (0, 2):
        return f"exit {p.returncode}: {p.stderr[-300:]!r}"
    if p.returncode == 2:
        err = p.stderr.strip().splitlines()
        if not err or not err[-1].startswith("memwall: error: ") or "internal error" in p.stderr:
            return f"exit 2 without an error line: {p.stderr[-300:]!r}"
        if len(p.stderr) > 2000:
            return f"an error message of {len(p.stderr)} characters"
        if not re.match(r"memwall: error: [^:]*(yaml|/[^:]*|--\w+)(:\d+)?: ", err[-1]):
            return f"the error names no file: {err[-1][:200]!r}"
    return None


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("memwall")
    a.add_argument("--seconds", type=float, default=120)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--keep", default=None, help="folder for the mutants that found a problem")
    a.add_argument("--sanitized", action="store_true",
                   help="memwall is an ASan build: bound peak resident memory, not address space")
    args = a.parse_args()
    global SANITIZED
    SANITIZED = args.sanitized
    global TIME_LIMIT_S
    if SANITIZED:  # ASan and UBSan run memwall 2-5x slower (a plan mutant enumerates hundreds of layouts)
        TIME_LIMIT_S *= 3
    memwall = os.path.abspath(args.memwall)
    rng = random.Random(args.seed)
    corpus = seeds()
    deadline = time.monotonic() + args.seconds
    tried, problems, ran = 0, [], 0
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < deadline:
            kind, origin = rng.choice(corpus)
            # Mutants live beside their origin's name, so relative references still resolve.
            path = os.path.join(tmp, f"mutant-{tried}.yaml")
            text = mutate(open(origin).read(), rng).replace("../../topologies/", ROOT + "/topologies/")
            text = text.replace("../validation-megatron/", ROOT + "/scenarios/validation-megatron/")
            open(path, "w").write(text)
            tried += 1
            if kind == "fabric":
                cmds = [[memwall, "topo", path, "--gpus", str(rng.choice([8, 16, 64]))]]
            elif kind == "plan":
                cmds = [[memwall, "plan", path, "--top", "1"]]
            else:
                cmds = [[memwall, "validate", path]]
            for cmd in cmds:
                problem = check(cmd, path)
                if problem is None and kind == "scenario" and tried % 4 == 0:
                    ok = subprocess.run([memwall, "validate", path], capture_output=True).returncode == 0
                    if ok:  # a valid scenario also runs (no --allow-oom: a plan over HBM is exit 2)
                        ran += 1
                        problem = check([memwall, "run", "--json", path], path)
                if problem:
                    problems.append((origin, problem))
                    print(f"PROBLEM {os.path.basename(origin)} mutant {tried}: {problem}")
                    if args.keep:
                        os.makedirs(args.keep, exist_ok=True)
                        open(os.path.join(args.keep, f"mutant-{tried}.yaml"), "w").write(text)
            os.unlink(path)
    print(f"fuzz: {tried} mutants of {len(corpus)} files (seed {args.seed}), {ran} simulated, "
          f"{len(problems)} problem(s)")
    print(f"{tried - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
