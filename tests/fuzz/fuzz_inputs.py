#!/usr/bin/env python3
"""A seeded mutation fuzzer of memwall's inputs: scenario, fabric, sweep and plan files.

Each mutant of a shipped file goes through `memwall validate` (scenarios, sweeps), `memwall topo`
(fabrics) or `memwall plan --top 1` (plans); a scenario that validates is also run. Whatever the
input, memwall must exit 0 or 2 (never 1, an internal error, on input; never a signal), name a file in
one short, printable error line (no control character, no terminal escape), leave no output file
behind when it fails, and stay within the time and memory bounds. Failing mutants are kept in --keep
DIR to reproduce them.

The same mutants run on every machine: --mutants per shipped file, each file's mutants drawn from a
generator seeded by (--seed, the file's name), sized so that the ctest fits its time on a slow 2-core
machine. A fuzzer that ran for a time budget reached further on a fast machine, and failed there on a
mutant a slow one never saw. PINNED mutants (found by earlier runs) are always run first.

Usage: fuzz_inputs.py MEMWALL [--mutants 40] [--seed 1] [--keep DIR] [--sanitized]
"""
import argparse
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HOSTILE_VALUES = ["0", "-1", "1e9", "1e-324", "5e-324s", "inf", "nan", ".nan", "-.inf", "''", "[]", "{}", "~",
                  "9223372036854775807", "18446744073709551616", "1e400GB/s", "0GB/s", "1e30TFLOP/s", "1.5",
                  "x" * 5000, "/etc/passwd", "/dev/zero", ".", "..", "&a [*a]", "[1, [2, [3]]]", "true",
                  "4294967296", "65537", "-0", "0x10", "1_000", "'\\0'", "!!binary AAAA", "*undefined"]
# Text that must never reach a terminal raw, and bytes that are not UTF-8 (written through
# surrogateescape: "\udcff" is the byte 0xff).
HOSTILE_VALUES += ['"\\e[31mred\\a"', '"two\\nlines"', "'\x1b]0;title\x07'", "caf\udce9", "\udcff\udcfe",
                   '"\\u0085next"', "x\x7f"]
# Valid but huge: at or near the input limits.
HOSTILE_VALUES += ["131072", "131073", "10000", "100000", "1000000", "1000000000"]
HOSTILE_LINES = ["[a]: 1", "{x: 1}: 2", "? [k]\n: v", "<<: *nothing", "%YAML 9.9", "---\n---", "\t- tab",
                 "key: [unclosed", "'quote"]
# Mutants that found problems once, run first on every machine: (kind, shipped file, what to change).
PINNED = [
    # A plan whose base is a 5,000-character name: its message quoted the name whole (5,111 characters).
    ("plan", "scenarios/plan-megatron/02-gpt-3p6b-64gpu.yaml", lambda t: re.sub(r"(?m)^base: .*$", "base: " + "x" * 5000, t)),
    # A key edited lower in the file: the first one won, silently.
    ("scenario", "scenarios/worked-example/2-one-sequence.yaml", lambda t: t + "model:\n  layers: 64\n"),
    # A name that is not UTF-8: the run went through, then died writing its results.
    ("scenario", "scenarios/worked-example/2-one-sequence.yaml", lambda t: t.replace('name: "', 'name: "\udcff', 1)),
    # Escapes, a bell and a line break in a value quoted by an error.
    ("scenario", "scenarios/worked-example/2-one-sequence.yaml",
     lambda t: t.replace("gpu: A100-80GB", 'gpu: "\\e[31mA100\\a\\nGB"', 1)),
    # A fabric that is a file of text, not YAML keys: its contents were echoed.
    ("scenario", "scenarios/worked-example/2-one-sequence.yaml", lambda t: t.replace("gpus: 1", "gpus: 1\n  fabric: /etc/passwd")),
    # Megatron-Core layout strings: nested repeats that write out to 10^12 characters, unbalanced ones.
    ("scenario", "scenarios/worked-example/2-one-sequence.yaml",
     lambda t: t + 'parallelism: {pipeline: 2, pipeline_layout: "E(((t*9999)*9999)*9999)|L"}\n'),
    ("scenario", "scenarios/worked-example/2-one-sequence.yaml",
     lambda t: t + 'parallelism: {pipeline: 2, pipeline_layout: "E((t|)*3|L*"}\n'),
]
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
        op = rng.randrange(8)
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
        elif op == 7 and lines:  # a key written again further down, with a hostile value: a duplicate key
            m = re.match(r"(\s*[\w.]+:\s*)\S", lines[i])
            if m:
                j = rng.randrange(i, len(lines) + 1)
                lines.insert(j, m.group(1) + rng.choice(HOSTILE_VALUES))
    return "\n".join(lines) + "\n"


# Under AddressSanitizer an address-space limit cannot work (ASan reserves terabytes of shadow
# address space at start): --sanitized checks each run's peak resident memory afterwards instead.
SANITIZED = False


def limits():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def peak_child_rss_bytes():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def check(cmd, path, outputs=()):
    """A problem with this memwall invocation, or None. `outputs`: files it writes, none of which may
    exist after it failed."""
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
    if re.search(r"[\x00-\x09\x0b-\x1f\x7f\x80-\x9f\ufffd]", p.stderr):
        return f"a control character in the messages: {p.stderr[-300:]!r}"
    if p.returncode != 0:
        left = [o for o in outputs if os.path.exists(o)]
        if left:
            return f"exit {p.returncode} left an output file behind: {left}"
    if p.returncode == 2:
        err = p.stderr.strip().splitlines()
        if not err or not err[-1].startswith("memwall: error: ") or "internal error" in p.stderr:
            return f"exit 2 without an error line: {p.stderr[-300:]!r}"
        if len(p.stderr) > 2000:
            return f"an error message of {len(p.stderr)} characters"
        if not re.match(r"memwall: error: [^:]*(yaml|/[^:]*|--\w+)(:\d+)?: ", err[-1]):
            return f"the error names no file: {err[-1][:200]!r}"
    return None


def mutants(corpus, per_file, seed):
    """(kind, origin, text) of every mutant: the pinned ones, then per_file of each shipped file, each
    file's drawn from its own generator, so that a file's mutants do not depend on the others."""
    for kind, rel, change in PINNED:
        yield kind, os.path.join(ROOT, rel), change(open(os.path.join(ROOT, rel)).read())
    for kind, origin in corpus:
        rng = random.Random(seed * 1000003 + zlib.crc32(os.path.relpath(origin, ROOT).encode()))
        text = open(origin).read()
        for _ in range(per_file):
            mutant = mutate(text, rng)
            gpus = rng.choice([8, 16, 64])
            yield kind, origin, mutant if kind != "fabric" else (mutant, gpus)


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("memwall")
    a.add_argument("--mutants", type=int, default=40, help="mutants of each shipped file")
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
    corpus = seeds()
    tried, problems, ran = 0, [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for kind, origin, text in mutants(corpus, args.mutants, args.seed):
            gpus = 16
            if kind == "fabric":
                text, gpus = text
            # Mutants live beside their origin's name, so relative references still resolve.
            path = os.path.join(tmp, f"mutant-{tried}.yaml")
            text = text.replace("../../topologies/", ROOT + "/topologies/")
            text = text.replace("../validation-megatron/", ROOT + "/scenarios/validation-megatron/")
            text = text.replace("base: jobs/", "base: " + ROOT + "/scenarios/what-if/jobs/")  # jobs files' jobs
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            tried += 1
            if kind == "fabric":
                cmds = [[memwall, "topo", path, "--gpus", str(gpus)]]
            elif kind == "plan":
                cmds = [[memwall, "plan", path, "--top", "1"]]
            else:
                cmds = [[memwall, "validate", path]]
            for cmd in cmds:
                problem = check(cmd, path)
                if problem is None and kind == "scenario" and (tried <= len(PINNED) or tried % 4 == 1):
                    ok = subprocess.run([memwall, "validate", path], capture_output=True).returncode == 0
                    if ok:  # a valid scenario also runs (no --allow-oom: a plan over HBM is exit 2)
                        ran += 1
                        timeline = os.path.join(tmp, "timeline.json")
                        problem = check([memwall, "run", "--json", path, "--timeline", timeline], path, [timeline])
                        if os.path.exists(timeline):
                            os.unlink(timeline)
                if problem:
                    problems.append((origin, problem))
                    print(f"PROBLEM {os.path.basename(origin)} mutant {tried}: {problem}")
                    if args.keep:
                        os.makedirs(args.keep, exist_ok=True)
                        with open(os.path.join(args.keep, f"mutant-{tried}.yaml"), "w", encoding="utf-8",
                                  errors="surrogateescape") as f:
                            f.write(text)
            os.unlink(path)
    print(f"fuzz: {tried} mutants ({len(PINNED)} pinned, {args.mutants} of each of {len(corpus)} files, "
          f"seed {args.seed}), {ran} simulated, {len(problems)} problem(s)")
    print(f"{tried - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
