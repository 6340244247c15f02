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


def search(dvfslab, table, gpu, workload, scratch):
    db = os.path.join(scratch, f"{abs(hash((gpu, workload)))}.sqlite")
    run = subprocess.run(
        [dvfslab, "search", "--device", f"replay:{table}#{gpu}", "--workload", workload,
         "--strategy", "auto", "--db", db, "--json"],
        capture_output=True, text=True, check=False)
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1:] or ["exit %d" % run.returncode]
    return json.loads(run.stdout), None


def chosen_energy(curve, baseline, optimum):
    """The table's energy at the search's optimum; the default probe is the
    workload's baseline, and a knob the search left alone is at the baseline's value."""
    if optimum.get("is_default"):
        return curve[baseline]
    wanted = (optimum.get("sm_mhz"), optimum.get("mem_mhz"), optimum.get("power_limit_w"))
    setting = tuple(b if w is None else w for w, b in zip(wanted, baseline))
    return curve.get(setting, math.nan)


def nearest_rank(values, q):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dvfslab")
    parser.add_argument("table")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--per-curve", action="store_true")
    args = parser.parse_args()
    curves = table_curves(args.table)
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda item: (item, search(args.dvfslab, os.path.abspath(args.table), *item[0], scratch)),
            curves.items()))
    regrets, probes, failures = [], [], []
    for ((gpu, workload), (curve, baseline)), (result, error) in results:
        if result is None:
            failures.append(f"{gpu} / {workload}: {error[0]}")
            continue
        regret = chosen_energy(curve, baseline, result["optimum"]) / min(curve.values()) - 1
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
    for line in failures:
        print("  failed: " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
