#!/usr/bin/env python3
"""bench_sample.py DIR [--drop KERNEL] [--drop-icount KERNEL]: write into
DIR a results folder of the shape scripts/bench.sh writes (meta.txt and the
CSV files), with made-up figures, so that make test can run the report
(scripts/bench_report.py) and its check (tests/check_bench.py) without
booting anything.  --drop leaves KERNEL's hackbench times out, and
--drop-icount its second -icount boot's hackbench counts, which the check
must catch.
"""

import argparse
import csv
import os
import random

# What the check expects: the kernels, and the module's tests.
from check_bench import HOLDING, KERNELS, MOMENTS, PRIMITIVES, TESTS

SIZES = (64, 4096)
HACKBENCH = ((1, 20), (100, 2))


def write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--drop", choices=KERNELS)
    ap.add_argument("--drop-icount", choices=KERNELS)
    args = ap.parse_args()
    rng = random.Random(2010)
    os.makedirs(args.dir, exist_ok=True)
    with open(os.path.join(args.dir, "meta.txt"), "w") as f:
        f.write("date: (a sample for make test)\n")
        for k in KERNELS:
            f.write(f"kernel: {k} = stage 00, VARIANT=sample (none)\n")
        f.write("settings: boots=2 runs=1 cpus=2 hackbench=1x20,100x2 objects=10000 "
                "icount_objects=10000 sizes=" + ",".join(map(str, SIZES)) + "\n")
    write(os.path.join(args.dir, "hackbench.csv"),
          ["kernel", "cpus", "clock", "boot", "groups", "loops", "run", "seconds"],
          [(k, 2, "real", b, g, l, 1, round(rng.uniform(1, 3), 3))
           for k in KERNELS if k != args.drop for b in (1, 2) for g, l in HACKBENCH] +
          [(k, 1, "icount", b, g, l, 1, round(rng.uniform(2, 3), 3))
           for k in KERNELS for b in (1, 2) if (k, b) != (args.drop_icount, 2) for g, l in HACKBENCH])
    write(os.path.join(args.dir, "memory.csv"),
          ["kernel", "cpus", "boot", "when", "slab_kb", "sunreclaim_kb", "queued_kb"],
          [(k, 2, b, w, rng.randint(5000, 9000), rng.randint(3000, 5000),
            rng.randint(100, 900) if k in HOLDING else "-")
           for k in KERNELS for b in (1, 2) for w in MOMENTS])
    rows = []
    for k in KERNELS:
        for clock, boots in (("real", (1, 2)), ("icount", (1, 2))):
            for b in boots:
                for t in (t for t in TESTS if t not in PRIMITIVES):
                    if clock == "icount" and t.startswith("remote"):
                        continue
                    rows += [(k, 2 if clock == "real" else 1, clock, b, t, s, 10000,
                              rng.randint(900000, 2000000)) for s in SIZES]
                rows += [(k, 2 if clock == "real" else 1, clock, b, p, 0, 10000,
                          rng.randint(100000, 900000)) for p in PRIMITIVES]
    write(os.path.join(args.dir, "micro.csv"),
          ["kernel", "cpus", "clock", "boot", "test", "size", "ops", "ns"], rows)
    write(os.path.join(args.dir, "paths.csv"),
          ["kernel", "groups", "loops", "alloc_fast", "alloc_slow", "free_fast", "free_slow"],
          [(k, g, l, rng.randint(10000, 90000), rng.randint(100, 9000),
            rng.randint(10000, 90000), rng.randint(100, 9000)) for k in KERNELS for g, l in HACKBENCH])


if __name__ == "__main__":
    main()
