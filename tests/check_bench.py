#!/usr/bin/env python3
"""check_bench.py RESULTS: every figure of a make bench run is in its
results folder (scripts/bench.sh), for make test's smoke run.  Checks that
the figures exist and make sense, never what they are: a smoke run's
numbers mean nothing.  Prints what is missing and exits 1, or exits 0.
"""

import csv
import os
import re
import sys
import xml.etree.ElementTree as ET

KERNELS = ("SLAB", "SLUB", "SLUB+Q", "sheaves")
# The kernels whose objects wait above the slabs: SLUB+Q's queues, the
# sheaves and barns (guest/run/bench counts them, queued_kb).
HOLDING = ("SLUB+Q", "sheaves")
# What modules/slab_bench times, as its comment lists it.
TESTS = ["pair"] + [f"batch-{n}-{op}" for n in (1, 100, 10000) for op in ("alloc", "free")] + \
    ["remote-free", "remote-alloc", "bulk-alloc", "bulk-free"]
# And once, with size 0, the fast paths' primitives alone.
PRIMITIVES = ["cmpxchg16b", "irq-off"]
TESTS += PRIMITIVES
# When guest/run/bench reads the slab memory.
MOMENTS = ("boot", "hackbench", "settled", "shrink")


def rows(results, name):
    with open(os.path.join(results, name), newline="") as f:
        return list(csv.DictReader(f))


def main():
    results = sys.argv[1]
    problems = []
    with open(os.path.join(results, "meta.txt")) as f:
        meta = f.read()
    settings = dict(re.findall(r"(\w+)=(\S+)", meta.split("settings:", 1)[1]))
    groups = {int(c.split("x")[0]) for c in settings["hackbench"].split(",")}
    sizes = {int(s) for s in settings["sizes"].split(",")}
    cpus = {int(c) for c in settings["cpus"].split(",")}
    for kernel in KERNELS:
        if f"kernel: {kernel} = " not in meta:
            problems.append(f"meta.txt does not say how the {kernel} kernel was made")

    hb = rows(results, "hackbench.csv")
    for kernel in KERNELS:
        for c in cpus:
            for g in groups:
                secs = [float(r["seconds"]) for r in hb if r["clock"] == "real"
                        and r["kernel"] == kernel and int(r["cpus"]) == c and int(r["groups"]) == g]
                if not secs or min(secs) <= 0:
                    problems.append(f"hackbench: no time for {kernel}, {c} CPUs, {g} groups")
    # And once a boot in the two -icount boots (guest/run/bench-instructions).
    counted = {(r["kernel"], int(r["groups"]), r["boot"]) for r in hb
               if r["clock"] == "icount" and int(r["cpus"]) == 1 and float(r["seconds"]) > 0}
    problems += [f"hackbench in instructions: no count for {k}, {g} groups, boot {b}"
                 for k in KERNELS for g in sorted(groups) for b in ("1", "2") if (k, g, b) not in counted]

    for r in rows(results, "memory.csv"):
        if int(r["slab_kb"]) <= 0 or int(r["sunreclaim_kb"]) <= 0:
            problems.append(f"memory: no slab memory in {r}")
        if (r["queued_kb"] == "-") != (r["kernel"] not in HOLDING):
            problems.append(f"memory: queued objects given for an allocator without queues "
                            f"or sheaves, or missing for one with them: {r}")
    have = {(r["kernel"], r["when"]) for r in rows(results, "memory.csv")}
    problems += [f"memory: no figure for {k} after {w}" for k in KERNELS for w in MOMENTS
                 if (k, w) not in have]

    micro = rows(results, "micro.csv")
    have = {(r["kernel"], r["clock"], r["boot"], r["test"], int(r["size"]))
            for r in micro if int(r["ops"]) > 0 and int(r["ns"]) > 0}
    for kernel in KERNELS:
        for clock, boots in (("real", ["1"]), ("icount", ["1", "2"])):
            for boot in boots:
                for test in TESTS:
                    for size in sizes if test not in PRIMITIVES else (0,):
                        # One CPU under -icount: no remote frees.
                        if clock == "icount" and test.startswith("remote"):
                            continue
                        if (kernel, clock, boot, test, size) not in have:
                            problems.append(f"microbenchmark: no {test} of {size} B for {kernel}, "
                                            f"{clock} time, boot {boot}")

    # The statistics kernels: each allocator counted allocations and frees
    # in each hackbench run, some of them fast.
    if "(quick)" not in meta:
        have = {(r["kernel"], int(r["groups"])) for r in rows(results, "paths.csv")
                if int(r["alloc_fast"]) > 0 and int(r["free_fast"]) > 0
                and int(r["alloc_slow"]) + int(r["free_slow"]) > 0}
        problems += [f"paths: no fast and slow path counts for {k}, {g} groups"
                     for k in KERNELS for g in groups if (k, g) not in have]

    with open(os.path.join(results, "report.md")) as f:
        report = f.read()
    for c in cpus:
        for g in groups:
            if not re.search(rf"^\| {c} \| {g} \| \d+ \|", report, re.M):
                problems.append(f"report.md: no hackbench row for {c} CPUs, {g} groups")
    counts = report.split("### hackbench in instructions", 1)[-1].split("\n## ", 1)[0]
    for g in groups:
        if not re.search(rf"^\| 1 \| {g} \| \d+ \|", counts, re.M):
            problems.append(f"report.md: no row of hackbench in instructions for {g} groups")
    headings = ["## hackbench -P", "### hackbench in instructions", "## Microbenchmark", "## Slab memory"]
    if "(quick)" not in meta:
        headings.append("## Fast and slow paths")
    for heading in headings:
        if heading not in report:
            problems.append(f"report.md: no section {heading}")
    for plot in ("hackbench.svg", "micro.svg"):
        path = os.path.join(results, plot)
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            problems.append(f"{plot}: not an SVG file ({e})")
            continue
        if not any(el.tag.endswith("path") for el in root.iter()):
            problems.append(f"{plot}: draws nothing")
        if f"]({plot})" not in report:
            problems.append(f"report.md does not show {plot}")

    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
