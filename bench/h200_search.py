#!/usr/bin/env python3
"""Issue 27's H200-sized search problems on the simulated H200 (sim:h200: 110 SM
clocks, power limits 200-700 W): for every built-in workload in training and
inference, `dvfslab sweep --strategy auto` against the exhaustive sweep of the same
plan (`--strategy grid`, one window per setting, the plan's default), on one knob
(every SM clock; every power limit in 5 W steps, 101) and on SM clock x power
limit (11,110 settings); and on the 16 power limits spread over the range that
`dvfslab search --knobs pl` plans ("pl16", scored on the 5 W line). With --knobs
sm,mem,pl16: the three knobs crossed, every SM clock x both memory clocks x those
16 limits (3,520 settings), scored against the exhaustive minimum and against
its SM clock lines smoothed (the 16 limits are too far apart to smooth along).

Scores the setting each strategy chose by the exhaustive run's energy per item at
that setting against the exhaustive run's least (regret), and its probes (distinct
settings), windows and simulated GPU seconds against the exhaustive run's. On one
knob it also scores the choice against the exhaustive line's expected energy
(expected_curve.py, a local quadratic over 7 settings on each side), and on two
knobs against the exhaustive surface smoothed so along each knob in turn: the least
of 110 single windows is partly the luckiest window, of 11,110 more so. Deterministic (the simulator's
noise is seeded); about 6 minutes for four strategies on 2 cores.

Usage: python3 bench/h200_search.py build/release/src/dvfslab [--out rows.json] [--strategies auto model ...]
                                    [--knobs sm pl sm,pl sm,mem,pl16] [--clock-map-loo]

With --clock-map-loo, `auto` on one knob gets the clock map learned from the other
cases' exhaustive sweeps (`dvfslab clock-map`; docs/search.md, "A GPU's clock map").
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from expected_curve import local_quadratic
from sweep_runs import analyzed_cases, mean_energy_per_item, sweep

# The simulated H200's workloads; the Llama decoder's two generation phases are
# inference only.
CASES = [(w, m) for w in ("alexnet", "vgg16", "googlenet", "resnet50", "bert_base", "gpt2_small")
         for m in ("train", "infer")] + [("llama_prefill", "infer"), ("llama_decode", "infer")]
KNOBS = {
    "sm": 'sm_mhz = "all"',
    "pl": 'power_limit_w = "200:700:5"',
    "sm,pl": 'sm_mhz = "all"\npower_limit_w = "200:700:5"',
    "sm,mem,pl16": 'sm_mhz = "all"\nmem_mhz = "all"\npower_limit_w = { count = 16 }',
}
# The knob sets run by default (the three crossed only when asked for).
DEFAULT_KNOBS = ["sm", "pl", "sm,pl"]
# The point columns a setting is keyed by.
COLUMNS = {"sm,mem,pl16": ("sm_mhz", "mem_mhz", "power_limit_w")}
# What `dvfslab search --knobs pl` plans on a GPU: 16 limits spread over the range,
# searched by auto and scored on the 5 W line's expected energy.
SPREAD_POWER_LIMITS = "power_limit_w = { count = 16 }"
EXPECTED_SPAN = 7


def plan_text(knob, workload, mode):
    knob_lines = SPREAD_POWER_LIMITS if knob == "pl16" else KNOBS[knob]
    return (f'[plan]\nname = "h200 {knob} {workload} {mode}"\n\n[knobs]\n{knob_lines}\n\n'
            f'[[cases]]\nworkloads = ["{workload}"]\nbatch_sizes = [16]\nmodes = ["{mode}"]\n')


def columns_of(knob):
    return COLUMNS.get(knob, ("sm_mhz", "power_limit_w"))


def energy_by_setting(db, knob):
    """(sm_mhz, power_limit_w), or with the memory clock between them for the three
    knobs -> mean energy per item over that setting's windows."""
    return mean_energy_per_item(db, columns_of(knob))


def expected_surface(energies):
    """The SM clock x power limit surface smoothed by the local quadratic along each
    knob in turn: (SM clocks, power limits, smoothed[clock index, limit index])."""
    clocks = sorted({sm for sm, pl in energies if sm is not None and pl is not None})
    limits = sorted({pl for sm, pl in energies if sm is not None and pl is not None})
    surface = np.array([[energies[(sm, pl)] for pl in limits] for sm in clocks])
    for i in range(len(clocks)):
        surface[i] = local_quadratic(surface[i], EXPECTED_SPAN)
    for j in range(len(limits)):
        surface[:, j] = local_quadratic(surface[:, j], EXPECTED_SPAN)
    return clocks, limits, surface


def expected_regret_pct(energies, knob, chosen):
    """The chosen setting's regret on the smoothed line, or on the smoothed surface of
    SM clock x power limit, or with three knobs on the smoothed SM clock lines (the
    default row, the knobs' top values on the simulated H200, is scored as the top;
    on one knob a value between the line's settings by linear interpolation)."""
    if knob == "sm,mem,pl16":
        # Every SM clock line (one per memory clock and limit) smoothed; the 16 limits,
        # about 33 W apart, and the two memory clocks are too few to smooth along.
        lines = {}
        for (sm, mem, pl), energy in energies.items():
            if None not in (sm, mem, pl):
                lines.setdefault((mem, pl), []).append((sm, energy))
        smoothed = {}
        for (mem, pl), line in lines.items():
            line.sort()
            for (sm, _), value in zip(line, local_quadratic([energy for _, energy in line], EXPECTED_SPAN)):
                smoothed[(sm, mem, pl)] = value
        top = tuple(max(setting[i] for setting in smoothed) for i in range(3))
        setting = tuple(value if value is not None else top[i] for i, value in enumerate(chosen))
        return 100 * (smoothed[setting] / min(smoothed.values()) - 1)
    if knob == "sm,pl":
        clocks, limits, surface = expected_surface(energies)
        sm = chosen[0] if chosen[0] is not None else clocks[-1]
        pl = chosen[1] if chosen[1] is not None else limits[-1]
        return 100 * (surface[clocks.index(sm), limits.index(pl)] / surface.min() - 1)
    index = 0 if knob == "sm" else 1
    line = sorted((setting[index], energy) for setting, energy in energies.items() if setting[index] is not None)
    smoothed = local_quadratic([energy for _, energy in line], EXPECTED_SPAN)
    values = [value for value, _ in line]
    value = chosen[index] if chosen[index] is not None else values[-1]
    return 100 * (np.interp(value, values, smoothed) / min(smoothed) - 1)


def run(binary, workdir, knob, workload, mode, strategy, extra=(), keep_table=None):
    """One sweep of the case; `keep_table`: also export its database there as a sweep table."""
    plan = os.path.join(workdir, "plan.toml")
    with open(plan, "w") as f:
        f.write(plan_text(knob, workload, mode))
    db = os.path.join(workdir, f"{strategy}-{knob}-{workload}-{mode}.sqlite".replace(",", "x"))
    if os.path.exists(db):
        os.remove(db)
    totals = sweep(binary, plan, "sim:h200", strategy, db, f"h200_search ({knob} {workload} {mode})", extra)
    optimum = analyzed_cases(binary, db)[0]["optimum"]
    energies = energy_by_setting(db, knob)
    if keep_table:
        subprocess.run([binary, "export", db, "--format", "sweep-table", "-o", keep_table], check=True)
    os.remove(db)
    return {"windows": totals["windows"], "gpu_s": totals["gpu_s"], "probes": len(energies),
            "chosen": tuple(optimum[column] for column in columns_of(knob)), "energies": energies}


def clock_map_without(binary, workdir, tables, left_out):
    """The clock map `dvfslab clock-map` learns from the exhaustive sweeps of every case
    but `left_out` (their exported tables joined): the map's `--clock-map` arguments."""
    joined = os.path.join(workdir, "others.csv")
    with open(joined, "w") as out:
        for case, table in sorted(tables.items()):
            if case == left_out:
                continue
            with open(table) as f:
                lines = f.readlines()
            out.writelines(lines if out.tell() == 0 else lines[1:])
    map_file = os.path.join(workdir, "map.json")
    subprocess.run([binary, "clock-map", joined, "-o", map_file], check=True, capture_output=True)
    return ["--clock-map", map_file]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--out", help="write the per-case rows as JSON here")
    parser.add_argument("--strategies", nargs="+", default=["auto"], help="search strategies to score (auto)")
    parser.add_argument("--knobs", nargs="+", default=DEFAULT_KNOBS, choices=list(KNOBS),
                        help="knob sets to run (sm pl sm,pl; sm,mem,pl16 only when named)")
    parser.add_argument("--clock-map-loo", action="store_true",
                        help="on one knob, search each case with the clock map of the other cases' "
                             "exhaustive sweeps (`dvfslab clock-map`, `sweep --clock-map`)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for knob in args.knobs:
            with_map = args.clock_map_loo and knob in ("sm", "pl")
            tables = {case: os.path.join(workdir, "grid-{}-{}-{}.csv".format(knob, *case)) for case in CASES}
            grids = {case: run(args.binary, workdir, knob, *case, "grid", keep_table=tables[case] if with_map else None)
                     for case in CASES}
            for workload, mode in CASES:
                grid = grids[(workload, mode)]
                least = min(grid["energies"].values())
                extra = clock_map_without(args.binary, workdir, tables, (workload, mode)) if with_map else []
                for strategy in args.strategies:
                    found = run(args.binary, workdir, knob, workload, mode, strategy,
                                extra if strategy == "auto" else [])
                    row = {"knobs": knob, "workload": workload, "mode": mode, "strategy": strategy,
                           "probes": found["probes"], "windows": found["windows"], "gpu_s": found["gpu_s"],
                           "choice": found["chosen"], "grid_settings": grid["probes"],
                           "grid_windows": grid["windows"], "grid_gpu_s": grid["gpu_s"],
                           "gpu_time_share": found["gpu_s"] / grid["gpu_s"],
                           "regret_pct": 100 * (grid["energies"][tuple(found["chosen"])] / least - 1)}
                    row["expected_regret_pct"] = expected_regret_pct(grid["energies"], knob, found["chosen"])
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
                if knob == "pl":
                    found = run(args.binary, workdir, "pl16", workload, mode, "auto")
                    row = {"knobs": "pl16", "workload": workload, "mode": mode, "strategy": "auto",
                           "probes": found["probes"], "windows": found["windows"], "gpu_s": found["gpu_s"],
                           "choice": found["chosen"], "gpu_time_share": found["gpu_s"] / grid["gpu_s"],
                           "expected_regret_pct": expected_regret_pct(grid["energies"], "pl", found["chosen"])}
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    print("knobs       strategy  cases  within 1 %  regret max  within 1 % of expected  probes med/max  "
          "windows med/max  GPU time vs exhaustive med/max")
    for knob in [*args.knobs, *(["pl16"] if "pl" in args.knobs else [])]:
        for strategy in args.strategies if knob != "pl16" else ["auto"]:
            group = [r for r in rows if r["knobs"] == knob and r["strategy"] == strategy]
            probes = [r["probes"] for r in group]
            windows = [r["windows"] for r in group]
            shares = [100 * r["gpu_time_share"] for r in group]
            expected = [r["expected_regret_pct"] for r in group if "expected_regret_pct" in r]
            expected_text = f"{sum(e <= 1 for e in expected)}/{len(expected)}" if expected else "-"
            regrets = [r["regret_pct"] for r in group if "regret_pct" in r]
            within = f"{sum(r <= 1 for r in regrets)}/{len(regrets)}" if regrets else "-"
            worst = f"{max(regrets):8.2f} %" if regrets else "         -"
            print(f"{knob:11} {strategy:9} {len(group):5}  {within:>10}"
                  f"  {worst}  {expected_text:>22}  {statistics.median(probes):6.0f} / {max(probes):<5}"
                  f"  {statistics.median(windows):7.0f} / {max(windows):<5}  "
                  f"{statistics.median(shares):.1f} / {max(shares):.1f} %")


if __name__ == "__main__":
    main()
