#!/usr/bin/env python3
"""bench_report.py RESULTS: the report of a make bench run (scripts/bench.sh).

Reads RESULTS/meta.txt, hackbench.csv, memory.csv, micro.csv and, when
the statistics kernels ran, paths.csv; writes
RESULTS/report.md and its plots (SVG, by gnuplot) and prints the table of
hackbench ratios next to the 2010 cover letter's.

hackbench: a kernel's figure for one boot is the median of that boot's
runs; its figure is the median over boots.  The 95 % interval of a ratio
comes from resampling the boots (the same boot numbers for both kernels,
which ran side by side in time), 2000 times.  Instructions per operation
are the means of two -icount boots; the report says how far they differ,
and warns past 0.5 %.  hackbench's instructions a run are the means of
the same boots, each row with how far its boots came apart.
"""

import csv
import os
import random
import statistics
import subprocess
import sys
from collections import defaultdict

# The kernels, in the order the report shows them: stage 00's SLAB and
# SLUB, stage 10's SLUB+Q, and stage 11's sheaves, where the run has them.
KERNELS = ("SLAB", "SLUB", "SLUB+Q", "sheaves")
# The hackbench ratios: each numerator's time over each denominator's, with
# the 2010 cover letter's figure where it has one (SEED).
RATIOS = (("SLUB+Q", "SLAB"), ("SLUB+Q", "SLUB"), ("sheaves", "SLUB+Q"), ("sheaves", "SLUB"))
# "[S+Q 00/16] SLUB with Queueing beats SLAB in hackbench", 25 June 2010,
# Message-ID 20100625212026.810557229@quilx.com: the ratios of the means of
# its published seconds, 8 CPUs, hackbench 1, 10 and 100 process 20000.
SEED = {("SLUB+Q", "SLAB"): {1: 1.0, 10: 0.881, 100: 0.786},
        ("SLUB+Q", "SLUB"): {1: 0.95, 10: 0.812, 100: 0.806}}
AGREE = 0.005
RESAMPLES = 2000


def read_csv(results, name):
    with open(os.path.join(results, name), newline="") as f:
        return list(csv.DictReader(f))


def ratio_interval(num, den):
    """The ratio of the medians of two kernels' per-boot figures (dicts
    boot -> value), and its 95 % bootstrap interval over the boots they
    share, or None for one boot."""
    point = statistics.median(num.values()) / statistics.median(den.values())
    boots = sorted(set(num) & set(den))
    if len(boots) < 2:
        return point, None
    rng = random.Random(2010)
    samples = []
    for _ in range(RESAMPLES):
        pick = [rng.choice(boots) for _ in boots]
        samples.append(statistics.median(num[b] for b in pick) /
                       statistics.median(den[b] for b in pick))
    samples.sort()
    return point, (samples[int(0.025 * RESAMPLES)], samples[int(0.975 * RESAMPLES) - 1])


def fmt_ratio(r):
    point, ci = r
    if ci is None:
        return f"{point:.3f} (one boot)"
    return f"{point:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def hackbench_table(rows, clock):
    """Per (cpus, groups, loops): each kernel's seconds by boot, of the
    runs timed by CLOCK (real, or icount: virtual time)."""
    runs = defaultdict(list)
    for r in rows:
        if r["clock"] != clock:
            continue
        key = (int(r["cpus"]), int(r["groups"]), int(r["loops"]), r["kernel"], int(r["boot"]))
        runs[key].append(float(r["seconds"]))
    table = defaultdict(lambda: defaultdict(dict))
    for (cpus, groups, loops, kernel, boot), secs in runs.items():
        table[(cpus, groups, loops)][kernel][boot] = statistics.median(secs)
    return table


def gnuplot(results, name, script):
    """Run a gnuplot script that writes RESULTS/NAME.svg; its data are
    files in RESULTS."""
    path = os.path.join(results, name + ".gp")
    with open(path, "w") as f:
        f.write(f'set terminal svg size 720,420 dynamic font "sans,12"\n'
                f'set output "{name}.svg"\n' + script)
    subprocess.run(["gnuplot", name + ".gp"], cwd=results, check=True)


def apart(values):
    """How far two boots' figures differ, as a share of their mean (0 for
    one boot)."""
    v = list(values)
    mean = statistics.mean(v)
    return abs(v[0] - v[1]) / mean if len(v) == 2 and mean else 0.0


def hackbench_instructions(table, kernels, ratios):
    """The report's lines on hackbench under -icount (TABLE of
    hackbench_table(..., "icount")), and the summary make bench prints.
    Unlike the module's loops, hackbench's 4000 processes are never
    scheduled quite alike from boot to boot, and some group counts less
    alike than others: each row says how far the two boots of a kernel
    came apart, which a ratio must clear to tell two kernels apart."""
    rows, text = [], []
    for (cpus, groups, loops) in sorted(table):
        k = table[(cpus, groups, loops)]
        if not all(k.get(name) for name in kernels):
            continue
        mean = {name: statistics.mean(k[name].values()) for name in kernels}
        worst = max(kernels, key=lambda name: apart(k[name].values()))
        cells = ([f"{mean[n]:.3f}" for n in kernels] + [f"{mean[a] / mean[b]:.3f}" for a, b in ratios] +
                 [f"{100 * apart(k[worst].values()):.2f} % ({worst})"])
        rows.append(f"| {cpus} | {groups} | {loops} | " + " | ".join(cells) + " |")
        text.append(f"{cpus:>4} {groups:>6} {loops:>5} " + " ".join(f"{c:>8}" for c in cells[:len(kernels)]) +
                    "".join(f"   {c:<14}" for c in cells[len(kernels):-1]) + "   " + cells[-1])
    if not rows:
        return [], []
    md = ["### hackbench in instructions", "",
          "Billions of instructions a run: the guest's seconds under QEMU's -icount, where its clock "
          "counts a nanosecond an instruction, one CPU (guest/run/bench-instructions, after the "
          "microbenchmark), each group count run once a boot; the mean of two boots, and how far "
          "the two boots of a kernel came apart, at most. A ratio below 1 means the first kernel "
          "named ran fewer instructions; one nearer 1 than the boots came apart tells the kernels "
          "no more apart than the boots. Without the host's noise, and without what instructions "
          "do not show: caches, and a second CPU.", "",
          "| CPUs | groups | loops | " + " | ".join(f"{k} G" for k in kernels) + " | " +
          " | ".join(f"{a}/{b}" for a, b in ratios) + " | boots apart |",
          "|---:|---:|---:|" + "---:|" * (len(kernels) + len(ratios)) + "---|"] + rows + [""]
    head = (f"{'cpus':>4} {'groups':>6} {'loops':>5} " + " ".join(f"{k:>8}" for k in kernels) +
            "".join(f"   {a + '/' + b:<14}" for a, b in ratios) + "   boots apart")
    return md, ["hackbench under -icount: billions of instructions a run, the mean of two boots", head] + text


def main():
    results = sys.argv[1]
    with open(os.path.join(results, "meta.txt")) as f:
        meta = f.read().strip().splitlines()
    hb_rows = read_csv(results, "hackbench.csv")
    hb = hackbench_table(hb_rows, "real")
    memory = read_csv(results, "memory.csv")
    micro = read_csv(results, "micro.csv")
    ran = {r["kernel"] for r in memory + micro}
    kernels = tuple(k for k in KERNELS if k in ran)
    ratios = tuple((a, b) for a, b in RATIOS if a in ran and b in ran)
    out = []

    out += ["# make bench: " + ", ".join(kernels[:-1]) + " and " + kernels[-1] + " on Linux 6.1", ""]
    out += ["    " + line for line in meta] + [""]

    # hackbench
    def title(r):
        return f"{r[0]}/{r[1]} [95 % CI]"

    head = (f"{'cpus':>4} {'groups':>6} {'loops':>5} " +
            " ".join(f"{k:>8}" for k in kernels) +
            "".join(f"   {title(r):<28} {'2010':>5}" if r in SEED else f"   {title(r):<28}"
                    for r in ratios))
    lines = [head]
    md = ["## hackbench -P", "",
          "Seconds: the median over boots of each boot's median run. A ratio below 1 means the "
          "first kernel named is faster. 2010: the cover letter's ratios (8 CPUs, 20000 loops).", "",
          "| CPUs | groups | loops | " + " | ".join(f"{k} s" for k in kernels) + " | " +
          " | ".join(f"{title(r)} | 2010" if r in SEED else title(r) for r in ratios) + " |",
          "|---:|---:|---:|" + "---:|" * len(kernels) +
          "".join("---|---:|" if r in SEED else "---|" for r in ratios)]
    plot = []
    for (cpus, groups, loops) in sorted(hb):
        k = hb[(cpus, groups, loops)]
        if not all(k.get(name) for name in kernels):
            continue
        med = {name: statistics.median(k[name].values()) for name in kernels}
        cells, text = [], []
        for r in ratios:
            value = ratio_interval(k[r[0]], k[r[1]])
            seed = SEED[r].get(groups, "") if r in SEED else None
            cells.append(fmt_ratio(value) + ("" if seed is None else f" | {seed}"))
            text.append(f"   {fmt_ratio(value):<28}" + ("" if seed is None else f" {seed:>5}"))
            lo, hi = value[1] if value[1] else (value[0], value[0])
            plot.append((cpus, groups, r, value[0], lo, hi, seed))
        lines.append(f"{cpus:>4} {groups:>6} {loops:>5} " +
                     " ".join(f"{med[n]:>8.3f}" for n in kernels) + "".join(text))
        md.append(f"| {cpus} | {groups} | {loops} | " + " | ".join(f"{med[n]:.3f}" for n in kernels) +
                  " | " + " | ".join(cells) + " |")
    print("hackbench -P: seconds, and the ratios of the kernels' times (below 1: the first named is faster)")
    print("\n".join(lines))
    out += md + [""]

    if plot:
        series = []
        with open(os.path.join(results, "hackbench.dat"), "w") as f:
            index = 0
            for cpus in sorted({p[0] for p in plot}):
                for r in ratios:
                    f.write(f"# cpus={cpus} {r[0]} over {r[1]}\n")
                    for p in plot:
                        if p[0] == cpus and p[2] == r:
                            f.write(f"{p[1]} {p[3]} {p[4]} {p[5]} {p[6] or 'NaN'}\n")
                    f.write("\n\n")
                    series.append(f'"hackbench.dat" index {index} using 1:2:3:4 with yerrorlines '
                                  f'title "{r[0]}/{r[1]}, {cpus} CPUs"')
                    if r in SEED:
                        series.append(f'"hackbench.dat" index {index} using 1:5 with points pt 7 '
                                      f'title "{r[0]}/{r[1]}, 2010 (8 CPUs)"')
                    index += 1
        gnuplot(results, "hackbench",
                'set logscale x\nset xlabel "hackbench groups"\n'
                'set ylabel "time of one kernel over another"\nset key outside\n'
                'set xrange [0.7:140]\nset grid\nplot ' + ", \\\n  ".join(series) + "\n")
        out += ["![Each ratio of hackbench times, with its 95 % interval](hackbench.svg)", ""]
    md, text = hackbench_instructions(hackbench_table(hb_rows, "icount"), kernels, ratios)
    out += md
    if text:
        print("\n".join(text))

    # Microbenchmark
    per = defaultdict(list)
    for r in micro:
        per[(r["clock"], r["cpus"], r["test"], int(r["size"]), r["kernel"])].append(
            (int(r["boot"]), int(r["ns"]) / int(r["ops"])))
    worst, worst_at = 0.0, ""
    icount = {}
    for (clock, cpus, test, size, kernel), values in per.items():
        if clock != "icount":
            continue
        v = [x for _, x in values]
        icount[(test, size, kernel)] = statistics.mean(v)
        if apart(v) > worst:
            worst, worst_at = apart(v), f"{kernel}'s {test} of {size} B"
    tests = sorted({k[0] for k in icount if k[1]}, key=lambda t: (t.split("-")[0], t))
    sizes = sorted({k[1] for k in icount if k[1]})
    agree = f"{100 * worst:.3f} %" + (f" ({worst_at})" if worst_at else "")
    print(f"microbenchmark under -icount: the two boots of each kernel differ by at most {agree}"
          + ("" if worst <= AGREE else f" (MORE THAN {100 * AGREE} %)"))
    out += ["## Microbenchmark (modules/slab_bench)", "",
            "Instructions per operation (an object allocated or freed), one CPU, QEMU's -icount: "
            f"the mean of two boots, which differ by at most {agree}" +
            ("." if worst <= AGREE else f", more than the {100 * AGREE} % they should: "
             "something ran in one boot's timed loop that did not run in the other's (an "
             "interrupt; for the largest objects, the page allocator's work, which depends on "
             "what memory looked like).") , "",
            "| test | size | " + " | ".join(kernels) + " |", "|---|---:|" + "---:|" * len(kernels)]
    for test in tests:
        for size in sizes:
            if all((test, size, k) in icount for k in kernels):
                out.append(f"| {test} | {size} | " +
                           " | ".join(f"{icount[(test, size, k)]:.0f}" for k in kernels) + " |")
    out.append("")
    real = defaultdict(dict)
    for (clock, cpus, test, size, kernel), values in per.items():
        if clock == "real":
            real[(cpus, test, size)][kernel] = statistics.median(x for _, x in values)
    if real:
        out += ["Nanoseconds per operation under TCG (real time, the median over boots):", "",
                "| CPUs | test | size | " + " | ".join(kernels) + " |",
                "|---:|---|---:|" + "---:|" * len(kernels)]
        for (cpus, test, size) in sorted(real, key=lambda k: (k[0], k[1].split("-")[0], k[1], k[2])):
            row = real[(cpus, test, size)]
            if size and all(k in row for k in kernels):
                out.append(f"| {cpus} | {test} | {size} | " +
                           " | ".join(f"{row[k]:.0f}" for k in kernels) + " |")
        out.append("")
    # The fast paths' two primitives, alone: size 0.
    prim = sorted({(cpus, test) for (cpus, test, size) in real if not size})
    if prim:
        out += ["The fast paths' primitives alone, nanoseconds per operation under TCG (real time) and "
                "instructions under -icount: SLUB's 16-byte compare-and-exchange (`cmpxchg_double()`, "
                "locked) and SLAB's and SLUB+Q's interrupts off and on again "
                "(`local_irq_save()`, `local_irq_restore()`).", "",
                "| CPUs | primitive | " + " | ".join(f"{k} ns" for k in kernels) + " | instructions |",
                "|---:|---|" + "---:|" * len(kernels) + "---:|"]
        for cpus, test in prim:
            row = real[(cpus, test, 0)]
            instr = [icount[(test, 0, k)] for k in kernels if (test, 0, k) in icount]
            count = f"{statistics.mean(instr):.1f}" if instr else ""
            out.append(f"| {cpus} | {test} | " +
                       " | ".join(f"{row[k]:.1f}" if k in row else "" for k in kernels) +
                       f" | {count} |")
        out.append("")
    if icount and sizes:
        with open(os.path.join(results, "micro.dat"), "w") as f:
            for kernel in kernels:
                f.write(f"# {kernel}: size, pair, batch-10000 (alloc and free)\n")
                for size in sizes:
                    pair = icount.get(("pair", size, kernel), float("nan"))
                    batch = [icount.get((f"batch-10000-{x}", size, kernel), float("nan"))
                             for x in ("alloc", "free")]
                    f.write(f"{size} {pair} {statistics.mean(batch)}\n")
                f.write("\n\n")
        series = []
        for i, kernel in enumerate(kernels):
            series.append(f'"micro.dat" index {i} using 1:2 with linespoints title "{kernel}, pair"')
            series.append(f'"micro.dat" index {i} using 1:3 with linespoints dashtype 2 '
                          f'title "{kernel}, 10000 then 10000 freed"')
        gnuplot(results, "micro",
                'set logscale x 2\nset xrange [4:16384]\nset xlabel "object size (bytes)"\n'
                'set ylabel "instructions per operation"\nset key outside\nset grid\nplot ' +
                ", \\\n  ".join(series) + "\n")
        out += ["![Instructions per operation by object size](micro.svg)", ""]

    # Memory
    mem = defaultdict(lambda: defaultdict(list))
    for r in memory:
        mem[(int(r["cpus"]), r["when"])][r["kernel"]].append(r)
    out += ["## Slab memory", "",
            "KiB, the median over boots: `Slab` and `SUnreclaim` of /proc/meminfo, and the objects "
            "waiting in SLUB+Q's cpu queues or in the sheaves and barns (- where the allocator "
            "has none), after boot, the moment the hackbench runs ended (hackbench), once the slab "
            "memory stopped falling after them (settled; the rule is `settle()` in "
            "guest/run/bench), and after every cache was shrunk.", "",
            "| CPUs | when | " + " | ".join(f"{k} Slab / SUnreclaim / queued" for k in kernels) + " |",
            "|---:|---|" + "---|" * len(kernels)]
    order = {"boot": 0, "hackbench": 1, "settled": 2, "shrink": 3}
    for (cpus, when) in sorted(mem, key=lambda k: (k[0], order.get(k[1], 9))):
        cells = []
        for k in kernels:
            rows = mem[(cpus, when)].get(k, [])
            if not rows:
                cells.append("")
                continue
            def med(field):
                v = [r[field] for r in rows if r[field] != "-"]
                return f"{statistics.median(int(x) for x in v):.0f}" if v else "-"
            cells.append(f"{med('slab_kb')} / {med('sunreclaim_kb')} / {med('queued_kb')}")
        out.append(f"| {cpus} | {when} | " + " | ".join(cells) + " |")
    out.append("")

    # Fast and slow paths, from the statistics kernels.
    paths = read_csv(results, "paths.csv") if os.path.exists(os.path.join(results, "paths.csv")) else []
    if paths:
        out += ["## Fast and slow paths", "",
                "One boot of each allocator built with its statistics (SLUB's and SLUB+Q's "
                "`SLUB_STATS`; SLAB's `DEBUG_SLAB`, which also red-zones small objects; "
                "`meta.txt` names the kernels), two CPUs, each hackbench run once; the allocations and frees over every "
                "cache during the run, and the share that took the fast path. Fast means: for "
                "SLAB, served from or freed into the CPU's array (a hit, not a miss); for SLUB, "
                "served from or freed to the CPU's own slab through its lockless freelist, any "
                "other free being a slow `__slab_free()` to that object's slab; for SLUB+Q, "
                "served from the CPU's queue, or freed into it while it had room; for sheaves, "
                "served from the CPU's main sheaf, or freed into it while it had room.", "",
                "| groups | loops | " + " | ".join(f"{k} allocs (fast) | {k} frees (fast)" for k in kernels) +
                " |", "|---:|---:|" + "---:|---:|" * len(kernels)]
        by = {(int(r["groups"]), int(r["loops"]), r["kernel"]): r for r in paths}
        for (groups, loops) in sorted({(g, l) for g, l, _ in by}):
            cells = []
            for k in kernels:
                r = by.get((groups, loops, k))
                if not r:
                    cells += ["", ""]
                    continue
                for op in ("alloc", "free"):
                    fast, slow = int(r[f"{op}_fast"]), int(r[f"{op}_slow"])
                    total = fast + slow
                    cells.append(f"{total} ({100 * fast / total:.1f} %)" if total else "0")
            out.append(f"| {groups} | {loops} | " + " | ".join(cells) + " |")
        out.append("")

    with open(os.path.join(results, "report.md"), "w") as f:
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
