#!/usr/bin/env python3
"""The docs say what the program does: docs/reference.md's key index names every key the loaders
accept (their key tables: each check_keys list, the fabric kinds' common keys, the plan's keys and
search axes), and nothing the loaders refuse; the README stays under 200 lines and lists every
command `memwall --help` has; each command answers `--help`.

Usage: check_reference.py MEMWALL REPO_ROOT
"""
import glob
import os
import re
import subprocess
import sys

QUOTED = re.compile(r'"([^"]+)"')


def loader_keys(root):
    keys = {}
    sources = glob.glob(os.path.join(root, "sim", "**", "*.cpp"), recursive=True) + \
        glob.glob(os.path.join(root, "model", "*.cpp")) + glob.glob(os.path.join(root, "topologies", "*.cpp"))
    for path in sources:
        text = open(path).read()
        rel = os.path.relpath(path, root)
        tables = [m.group(1) for m in re.finditer(r"check_keys\(\s*(?:fabric_keys\()?\s*\{([^}]*)\}", text)]
        tables += [m.group(1) for m in re.finditer(r"std::vector<std::string_view> keys\{([^}]*)\}", text)]
        tables += [m.group(1) for m in re.finditer(r"plan_keys\{([^}]*)\}", text)]
        for table in tables:
            for k in QUOTED.findall(table):
                keys.setdefault(k, rel)
    header = open(os.path.join(root, "sim", "plan", "plan_spec.hpp")).read()
    block = re.search(r"kSearchKeys\[\] = \{(.*?)\};", header, re.S).group(1)
    for name, _ in re.findall(r'\{"([a-z_]+)", "([a-z_.]+)"\}', block):
        keys.setdefault(name, "sim/plan/plan_spec.hpp")
    return keys


def main():
    memwall, root = sys.argv[1], os.path.abspath(sys.argv[2])
    failures = []
    keys = loader_keys(root)
    if len(keys) < 120:
        failures.append(f"only {len(keys)} keys found in the loaders: the patterns no longer match the source")
    reference = open(os.path.join(root, "docs", "reference.md")).read()
    index = reference[reference.index("## Key index"):]
    named = set(re.findall(r"`([a-z_0-9]+)", index))
    for k, where in sorted(keys.items()):
        if k not in named:
            failures.append(f"key '{k}' ({where}) is not in docs/reference.md's key index")
    readme = open(os.path.join(root, "README.md")).read()
    lines = readme.count("\n")
    if lines >= 200:
        failures.append(f"README.md has {lines} lines (under 200 wanted)")
    help_text = subprocess.run([memwall, "--help"], capture_output=True, text=True).stdout
    commands = re.findall(r"^  ([a-z]+)\s{2,}", help_text.split("Subcommands:")[1], re.M)
    if len(commands) < 8:
        failures.append(f"memwall --help lists {commands}")
    for c in commands:
        if f"memwall {c}" not in readme:
            failures.append(f"README's command table lacks `memwall {c}`")
        p = subprocess.run([memwall, c, "--help"], capture_output=True, text=True)
        if p.returncode != 0 or "Usage" not in p.stdout:
            failures.append(f"memwall {c} --help: exit {p.returncode}")
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        if not os.path.exists(os.path.join(root, link)):
            failures.append(f"README links {link}, which does not exist")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(keys)} loader keys, {len(commands)} commands, README {lines} lines: {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
