#!/usr/bin/env python3
"""Checks the crate graph against the drawing in README.md.

    python3 scripts/crate-graph.py

The published crates of the workspace and their dependencies on each other
(normal and build ones) must be exactly the lines of the drawing between
the README's `crate graph` markers: a crate that gains or loses a
dependency fails here until the drawing says so. nodekit-core's own
dependencies, all the way down, must name no database, HTTP or protocol
driver.
"""
import json
import re
import subprocess
import sys

README = "README.md"
CORE = "nodekit-core"
# Drivers the contract must never pull in, directly or through another crate.
DRIVERS = ("sqlx", "reqwest", "hyper", "rmcp", "redis", "usearch")


def drawn():
    text = open(README, encoding="utf-8").read()
    found = re.search(r"<!-- crate graph -->\n```text\n(.*?)```", text, re.S)
    if not found:
        sys.exit(f"{README}: no ```text block after <!-- crate graph -->")
    graph = {}
    for line in found.group(1).splitlines():
        crate, _, deps = line.partition("──▶")
        graph[crate.strip()] = {d.strip() for d in deps.split(",") if d.strip()}
    return graph


def built():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--locked"],
        check=True, capture_output=True, text=True,
    ).stdout
    packages = [p for p in json.loads(out)["packages"] if p.get("publish") != []]
    names = {p["name"] for p in packages}
    return {
        p["name"]: {
            d["name"] for d in p["dependencies"]
            if d["name"] in names and d["kind"] in (None, "build")
        }
        for p in packages
    }


def core_drivers():
    out = subprocess.run(
        ["cargo", "tree", "-p", CORE, "-e", "normal,build", "--prefix", "none",
         "--format", "{p}", "--locked"],
        check=True, capture_output=True, text=True,
    ).stdout
    crates = {line.split()[0] for line in out.splitlines() if line.strip()}
    return sorted(c for c in crates if c.startswith(DRIVERS))


def main():
    failed = False
    want, have = drawn(), built()
    for crate in sorted(set(want) | set(have)):
        gained = have.get(crate, set()) - want.get(crate, set())
        lost = want.get(crate, set()) - have.get(crate, set())
        if crate not in have:
            print(f"crate graph: {crate} is drawn but not in the workspace")
        elif crate not in want:
            print(f"crate graph: {crate} is not drawn")
        elif gained or lost:
            print(f"crate graph: {crate} depends on {sorted(have[crate]) or 'nothing'}, "
                  f"the drawing says {sorted(want[crate]) or 'nothing'}")
        else:
            continue
        failed = True
    drivers = core_drivers()
    if drivers:
        print(f"crate graph: {CORE} depends on {', '.join(drivers)}")
        failed = True
    if failed:
        print(f"Change the code, or the drawing in {README} if the change is meant.")
        return 1
    print(f"crate graph: as drawn ({len(have)} crates); {CORE} has no driver")
    return 0


if __name__ == "__main__":
    sys.exit(main())
