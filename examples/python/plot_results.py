#!/usr/bin/env python3
"""Reads a dvfslab database (or a sweep-table .csv) into pandas and plots energy per
item against the knob the sweep varied, one line per case, the optimum starred.

    python3 examples/python/plot_results.py sweep.sqlite --out energy.png
"""
import argparse

import matplotlib

matplotlib.use("Agg")  # draws into the file only; no display needed
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

import dvfslab  # noqa: E402

KNOB_LABELS = {"sm_mhz": "SM clock (MHz)", "mem_mhz": "memory clock (MHz)", "power_limit_w": "power limit (W)"}


def varied_knob(points):
    """The knob with the most distinct values among the measured settings."""
    return max(KNOB_LABELS, key=lambda knob: points[knob].dropna().nunique())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("database", help="dvfslab database or sweep-table CSV")
    parser.add_argument("--out", default="energy.png", help="figure file (PNG, PDF or SVG by extension)")
    parser.add_argument("--objective", default="energy", help="objective that picks the optimum")
    parser.add_argument("--max-cases", type=int, default=8, help="plot at most this many cases (default 8)")
    args = parser.parse_args()

    points = dvfslab.results(args.database, objective=args.objective).to_pandas()
    knob = varied_knob(points)
    measured = points.dropna(subset=[knob])
    cases = list(measured.groupby(["gpu", "workload", "mode", "batch", "simulated"], dropna=False))
    figure, axes = plt.subplots(figsize=(8, 5))
    for (gpu, workload, mode, batch, simulated), case in cases[:args.max_cases]:
        case = case.sort_values(knob)
        batch_text = "" if batch != batch else f" b{batch:.0f}"  # NaN: the table has no batch size
        label = f"{workload} {mode}{batch_text} on {gpu}{' (SIMULATED)' if simulated else ''}"
        line, = axes.plot(case[knob], case["energy_per_item_j"], marker="o", markersize=3, label=label)
        best = case[case["optimum"]]
        axes.plot(best[knob], best["energy_per_item_j"], marker="*", markersize=14, color=line.get_color())
    axes.set_xlabel(KNOB_LABELS[knob])
    axes.set_ylabel("energy per item (J)")
    axes.set_title(f"energy per item, optimum ({args.objective}) starred")
    if measured["simulated"].any():
        figure.text(0.99, 0.01, "SIMULATED", ha="right", va="bottom", color="gray")
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(args.out)
    print(f"{args.out}: {min(len(cases), args.max_cases)} of {len(cases)} cases, energy per item against {knob}")


if __name__ == "__main__":
    main()
