#!/usr/bin/env python3
"""Issue 27's dense study: `dvfslab study`'s plan on the simulated V100 with every
supported SM clock (`sm_mhz = "all"`; a GPU whose study plan also names memory
clocks keeps them: SM x memory), swept exhaustively (`--strategy grid`) and searched
(`--strategy auto`), and for every case the searched optimum's energy per item in
the exhaustive sweep against that sweep's least, and the two runs' simulated GPU
time.

    python3 bench/dense_study.py build/release/src/dvfslab [--device sim:v100] [--json FILE]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from sweep_runs import analyzed_cases, mean_energy_per_item, sweep

SM_KNOB = re.compile(r"^sm_mhz = .*$", re.MULTILINE)


def dense_plan(built_in):
    """The built-in study plan with every supported SM clock."""
    plan, replaced = SM_KNOB.subn('sm_mhz = "all"', built_in)
    if replaced != 1:
        raise ValueError("the study's plan has no single sm_mhz line")
    return plan


def energy_by_case(db):
    """(workload, mode, batch) -> {(sm_mhz, mem_mhz): mean energy per item over its
    windows}, the default setting under (None, None)."""
    by_case = {}
    means = mean_energy_per_item(db, ("workload", "mode", "batch", "sm_mhz", "mem_mhz"), "p.role = 'grid'")
    for (workload, mode, batch, sm, mem), energy in means.items():
        by_case.setdefault((workload, mode, batch), {})[(sm, mem)] = energy
    return by_case


def optimum_by_case(binary, db):
    """(workload, mode, batch) -> the (SM, memory clock) `dvfslab analyze` reports as
    optimal ((None, None): the default setting)."""
    return {(case["workload"], case["mode"], case["batch"]): (case["optimum"]["sm_mhz"], case["optimum"]["mem_mhz"])
            for case in analyzed_cases(binary, db)}


def regret_pct(energies, chosen):
    """The chosen setting's energy per item in the exhaustive sweep above its least, in %."""
    return 100 * (energies[chosen] / min(energies.values()) - 1)


def mhz(setting):
    """An (SM, memory clock) as the analysis prints it, '-' for a knob not set."""
    return "/".join("-" if value is None else str(value) for value in setting)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--device", default="sim:v100", help="a simulated GPU (sim:v100)")
    parser.add_argument("--json", help="write the per-case rows and both runs' totals here")
    args = parser.parse_args()
    try:
        built_in = subprocess.run([args.binary, "study", "--print-plan", "--device", args.device],
                                  capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"dense_study: cannot run {args.binary} study --print-plan: {e}")
    with tempfile.TemporaryDirectory() as workdir:
        plan = os.path.join(workdir, "plan.toml")
        with open(plan, "w") as f:
            f.write(dense_plan(built_in))
        runs, optima = {}, {}
        for strategy in ("grid", "auto"):
            db = os.path.join(workdir, f"{strategy}.sqlite")
            runs[strategy] = sweep(args.binary, plan, args.device, strategy, db, "dense_study")
            optima[strategy] = optimum_by_case(args.binary, db)
            if strategy == "grid":
                energies = energy_by_case(db)
    rows = []
    for case in sorted(energies):
        settings = [setting for setting in energies[case] if setting != (None, None)]
        rows.append({"workload": case[0], "mode": case[1], "batch": case[2], "settings": len(settings),
                     "exhaustive_optimum": optima["grid"][case], "auto_optimum": optima["auto"][case],
                     "regret_pct": regret_pct(energies[case], optima["auto"][case])})
    share = 100 * runs["auto"]["gpu_s"] / runs["grid"]["gpu_s"]
    print(f"{'case':24} settings  exhaustive (SM/mem MHz)  auto        regret")
    for row in rows:
        print(f"{row['workload'] + ' ' + row['mode'] + ' b' + str(row['batch']):24} {row['settings']:8}  "
              f"{mhz(row['exhaustive_optimum']):>23}  {mhz(row['auto_optimum']):>10}  {row['regret_pct']:5.2f} %")
    regrets = [row["regret_pct"] for row in rows]
    print(f"\n{len(rows)} cases: auto within 1 % of the exhaustive optimum on {sum(r <= 1 for r in regrets)}, "
          f"regret median {statistics.median(regrets):.2f} %, max {max(regrets):.2f} %; at the same clock on "
          f"{sum(row['auto_optimum'] == row['exhaustive_optimum'] for row in rows)}")
    for strategy in ("grid", "auto"):
        run = runs[strategy]
        print(f"{strategy}: {run['points']} points, {run['windows']} windows, {run['gpu_s']:.0f} s of simulated GPU time")
    print(f"auto's simulated GPU time: {share:.1f} % of the exhaustive sweep's")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": rows, "runs": runs, "gpu_time_share_pct": share}, f, indent=1)


if __name__ == "__main__":
    main()
