#!/usr/bin/env python3
"""`dvfslab search --strategy auto` replayed on every curve of one sweep table.

No noise is added: each probe returns the table's own row. Each curve's result is
scored against the table (energy = time_s x power_w, repetitions averaged), read
here with Python's csv module and not with dvfslab's reader:

    python3 bench/dense_replay_search.py build/debug/src/dvfslab \
        data/published/v100sxm2-sycl-microbench-core.csv [--jobs 4] [--per-curve]

Prints the share of curves whose chosen setting is within 1 % of the curve's least
energy, the probes' median and p90 (nearest rank), and the worst regret. It makes
no choice and tunes nothing: docs/search.md quotes its output.

A table that measured each setting once holds one noisy draw per setting, so its
least value is partly luck. `--expected-span N` also scores each one-knob curve
against its expected energy (expected_curve.py: local quadratic regression over N
settings on each side), beside two references: the table's own least-energy
setting (what an exhaustive sweep of these rows picks) and the expected curve's
best setting judged against the table's least value.

`--clock-map-loo` gives each search its GPU's clock map learned from the table's
other workloads (`dvfslab clock-map` on the table without the curve's rows, then
`search --clock-map`): nothing of the curve scored is in its map.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from expected_curve import local_quadratic, residual_spread


def knob(text):
    return int(text) if text.strip() else None


def table_curves(path):
    """{(gpu, workload): ({(sm, mem, pl): mean energy}, baseline setting)}."""
    sums = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    marked = {}
    with open(path, newline="", encoding="utf-8-sig") as f:
        for row in csv.DictReader(f):
            key = (knob(row["core_mhz"]), knob(row["mem_mhz"]), knob(row["power_limit_w"]))
            curve = (row["gpu"], row["workload"])
            entry = sums[curve][key]
            entry[0] += float(row["time_s"]) * float(row["power_w"])
            entry[1] += 1
            if row.get("default", "0").strip() == "1":
                marked.setdefault(curve, key)
    # A workload's baseline: its row marked default, else its highest setting
    # (data/published/README.md); a blank knob ranks above any value.
    def highest(settings):
        return max(settings, key=lambda s: tuple(math.inf if v is None else v for v in s))
    return {curve: ({s: total / n for s, (total, n) in settings.items()},
                    marked.get(curve) or highest(settings))
            for curve, settings in sums.items()}


def clock_map_without(dvfslab, table, gpu, workload, scratch):
    """The clock map of `gpu` learned from the table's rows of every other workload."""
    stem = os.path.join(scratch, f"{abs(hash((gpu, workload)))}")
    with open(table, newline="", encoding="utf-8-sig") as f, open(stem + ".csv", "w", newline="") as out:
        reader = csv.DictReader(f)
        writer = csv.DictWriter(out, fieldnames=reader.fieldnames)
        writer.writeheader()
        writer.writerows(row for row in reader if (row["gpu"], row["workload"]) != (gpu, workload))
    subprocess.run([dvfslab, "clock-map", stem + ".csv", "--gpu", gpu, "-o", stem + ".json"],
                   capture_output=True, text=True, check=True)
    return stem + ".json"


def search(dvfslab, table, gpu, workload, scratch, clock_map_loo=False):
    db = os.path.join(scratch, f"{abs(hash((gpu, workload)))}.sqlite")
    try:
        extra = ["--clock-map", clock_map_without(dvfslab, table, gpu, workload, scratch)] if clock_map_loo else []
    except subprocess.CalledProcessError as error:
        return None, error.stderr.strip().splitlines()[-1:] or ["clock-map exit %d" % error.returncode]
    run = subprocess.run(
        [dvfslab, "search", "--device", f"replay:{table}#{gpu}", "--workload", workload,
         "--strategy", "auto", "--db", db, "--json"] + extra,
        capture_output=True, text=True, check=False)
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1:] or ["exit %d" % run.returncode]
    return json.loads(run.stdout), None


def chosen_setting(baseline, optimum):
    """The search's optimum as a table setting: the default probe is the workload's
    baseline, and a knob the search left alone is at the baseline's value."""
    if optimum.get("is_default"):
        return baseline
    wanted = (optimum.get("sm_mhz"), optimum.get("mem_mhz"), optimum.get("power_limit_w"))
    return tuple(b if w is None else w for w, b in zip(wanted, baseline))


def expected_line(curve, span):
    """{setting: expected energy} of a curve that varies one knob, else None."""
    varying = [k for k in range(3) if len({s[k] for s in curve}) > 1]
    if len(varying) != 1:
        return None
    settings = sorted(curve, key=lambda s: s[varying[0]])
    measured = [curve[s] for s in settings]
    return dict(zip(settings, local_quadratic(measured, span))), residual_spread(
        measured, local_quadratic(measured, span))


def print_expected_scores(results, span):
    searched, exhaustive, luck, spreads = [], [], [], []
    for (_, (curve, baseline)), (result, _) in results:
        line = expected_line(curve, span)
        if result is None or line is None:
            continue
        expected, spread = line
        best_expected = min(expected.values())
        spreads.append(spread)
        searched.append(expected[chosen_setting(baseline, result["optimum"])] / best_expected - 1)
        table_best = min(curve, key=curve.get)
        exhaustive.append(expected[table_best] / best_expected - 1)
        expected_best = min(expected, key=expected.get)
        luck.append(curve[expected_best] <= 1.01 * min(curve.values()))
    if not searched:
        return
    def summary(regrets):
        within = sum(1 for r in regrets if r <= 0.01)
        return (f"within 1 %: {within}/{len(regrets)} ({100 * within / len(regrets):.1f} %), regret "
                f"median {100 * nearest_rank(regrets, 0.5):.2f} %, p90 {100 * nearest_rank(regrets, 0.9):.2f} %, "
                f"worst {100 * max(regrets):.2f} %")
    print(f"  scored on the expected energy (local quadratic, {span} settings each side; "
          f"measurement noise median {100 * nearest_rank(spreads, 0.5):.2f} %, "
          f"p90 {100 * nearest_rank(spreads, 0.9):.2f} %):")
    print(f"    search:                            {summary(searched)}")
    print(f"    the table's least-energy setting:  {summary(exhaustive)}")
    print(f"  the expected curve's best setting is within 1 % of the table's least energy on "
          f"{sum(luck)}/{len(luck)} curves")


def nearest_rank(values, q):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dvfslab")
    parser.add_argument("table")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--per-curve", action="store_true")
    parser.add_argument("--expected-span", type=int, metavar="N",
                        help="also score one-knob curves against their expected energy")
    parser.add_argument("--clock-map-loo", action="store_true",
                        help="search each curve with the clock map of the table's other workloads")
    args = parser.parse_args()
    curves = table_curves(args.table)
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda item: (item, search(args.dvfslab, os.path.abspath(args.table), *item[0], scratch,
                                       args.clock_map_loo)),
            curves.items()))
    regrets, probes, failures = [], [], []
    for ((gpu, workload), (curve, baseline)), (result, error) in results:
        if result is None:
            failures.append(f"{gpu} / {workload}: {error[0]}")
            continue
        regret = curve.get(chosen_setting(baseline, result["optimum"]), math.nan) / min(curve.values()) - 1
        regrets.append(regret)
        probes.append(len(result["probes"]))
        if args.per_curve:
            print(f"{workload:<60} {len(curve):>4} settings {len(result['probes']):>3} probes "
                  f"regret {100 * regret:6.2f} %")
    within = sum(1 for r in regrets if r <= 0.01)
    print(f"{os.path.basename(args.table)}: {len(curves)} curves, "
          f"{sum(len(c) for c, _ in curves.values()) // max(1, len(curves))} settings per curve (mean)")
    print(f"  searched {len(regrets)}, failed {len(failures)}")
    if regrets:
        print(f"  within 1 % of the table's least energy: {within}/{len(regrets)} "
              f"({100 * within / len(regrets):.1f} %)")
        print(f"  probes: median {nearest_rank(probes, 0.5)}, p90 {nearest_rank(probes, 0.9)}, "
              f"max {max(probes)}")
        print(f"  regret: median {100 * nearest_rank(regrets, 0.5):.2f} %, "
              f"p90 {100 * nearest_rank(regrets, 0.9):.2f} %, worst {100 * max(regrets):.2f} %")
    if args.expected_span:
        print_expected_scores(results, args.expected_span)
    for line in failures:
        print("  failed: " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
