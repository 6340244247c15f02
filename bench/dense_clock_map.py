#!/usr/bin/env python3
"""How much of a real dense line's fine structure belongs to the GPU, not the workload.

On a line measured at every supported clock, the energy of neighbouring clocks
differs by a few per cent. Part of that is run-to-run noise; part is the GPU's own
voltage/frequency table, which makes some clocks cheaper than their neighbours for
every workload. This script measures the two parts and what knowing the second
is worth to a search, leave-one-workload-out (nothing is fitted to the curve
being scored):

    python3 bench/dense_clock_map.py data/published/v100sxm2-sycl-microbench-core.csv

1. Each curve's residual against its expected energy (expected_curve.py, 7
   settings each side), and the share of a held-out curve's residual variance that
   the mean residual of the other curves at the same clocks explains.
2. A search that knows that per-clock map from the other workloads: K evenly
   spread probes; their energies divided by the map give the trend, smoothed over
   the probes and interpolated to every clock; the trend times the map predicts
   every clock's energy; the TOP best predicted clocks not yet measured are
   measured, and the least measured energy is the answer. Scored against the
   table's least energy (the same score as dense_replay_search.py) for a grid of
   K and TOP: the grid is reported whole, nothing is chosen from it. The same
   search with a flat map (no knowledge of the GPU) is printed beside it.
"""
import argparse
import csv
import sys
from collections import defaultdict

import numpy as np

from expected_curve import local_quadratic


def same_grid_curves(path):
    """(clocks, {workload: energies}) for the workloads measured at the most common clock set."""
    energies = defaultdict(dict)
    with open(path, newline="", encoding="utf-8-sig") as f:
        for row in csv.DictReader(f):
            key = (row["gpu"], row["workload"])
            energies[key][int(row["core_mhz"])] = float(row["time_s"]) * float(row["power_w"])
    grids = defaultdict(list)
    for key, line in energies.items():
        grids[tuple(sorted(line))].append(key)
    clocks, keys = max(grids.items(), key=lambda item: len(item[1]))
    return np.array(clocks), np.array([[energies[k][c] for c in clocks] for k in keys])


def residuals(energies):
    return np.array([line / local_quadratic(line, 7) - 1 for line in energies])


def shared_share(residual):
    count = len(residual)
    others = (residual.sum(0)[None, :] - residual) / (count - 1)
    return 1 - np.var(residual - others) / np.var(residual)


def map_guided_regrets(energies, residual, spread, top, use_map=True):
    regrets, probes = [], []
    for held_out, line in enumerate(energies):
        clock_map = np.delete(residual, held_out, 0).mean(0) if use_map else np.zeros(len(line))
        spread_probes = np.unique(np.linspace(0, len(line) - 1, spread).round().astype(int))
        trend = local_quadratic(line[spread_probes] / (1 + clock_map[spread_probes]), 2)
        predicted = np.interp(np.arange(len(line)), spread_probes, trend) * (1 + clock_map)
        probed = set(spread_probes.tolist())
        candidates = [i for i in np.argsort(predicted) if i not in probed][:top]
        measured = list(probed) + candidates
        regrets.append(min(line[i] for i in measured) / line.min() - 1)
        probes.append(len(measured))
    return np.array(regrets), max(probes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    args = parser.parse_args()
    clocks, energies = same_grid_curves(args.table)
    residual = residuals(energies)
    print(f"{len(energies)} curves at the same {len(clocks)} clocks ({clocks[0]}-{clocks[-1]} MHz)")
    print(f"residual against the expected energy: sd {100 * residual.std():.2f} %; share a held-out "
          f"curve shares with the other curves' mean at the same clocks: {100 * shared_share(residual):.0f} %")
    print("search knowing the per-clock map of the other workloads, scored against the table's least energy:")
    print("  spread probes K  best predicted TOP  probes  within 1 %  regret median  p90      flat map: within 1 %  p90")
    for spread in (6, 8, 10):
        for top in (2, 4, 6):
            regrets, probes = map_guided_regrets(energies, residual, spread, top)
            flat, _ = map_guided_regrets(energies, residual, spread, top, use_map=False)
            print(f"  {spread:>15}  {top:>18}  {probes:>6}  {100 * np.mean(regrets <= 0.01):>8.1f} %"
                  f"  {100 * np.median(regrets):>11.2f} %  {100 * np.quantile(regrets, 0.9):.2f} %"
                  f"  {100 * np.mean(flat <= 0.01):>18.1f} %  {100 * np.quantile(flat, 0.9):.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
