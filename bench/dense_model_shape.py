#!/usr/bin/env python3
"""A model of a dense line whose power takes its shape from the GPU's other workloads.

dvfslab's model (docs/model.md) fits a parametric power form from 4 settings. On
the real dense V100-SXM2 lines that form misses the knee: fitted even to a line's
expected power it is 2.3 % off. This script measures, leave-one-workload-out, what
the shape of power along the clock learned from the other workloads of the same
GPU would give instead (nothing of the line scored is in its shape):

    python3 bench/dense_model_shape.py data/published/v100sxm2-sycl-microbench-core.csv

For every line of at least 30 clocks, the shape is the median over the table's
other lines (same GPU, same clocks) of their power divided by their expected power
at the top clock: once over their expected power (the trend, the GPU's knee), once
over their readings (the GPU's fine structure too, which the clock map also
carries). The line's power is then a + b * shape and its time c + d / clock, both
least squares (unconstrained: the shape is no split into static and dynamic
power) over the same 4 settings
bench/model_bench places (indices 0, 1/3, 2/3 and 1 of the line, the default
replacing the nearest but the top). Scored over the other settings as model_bench
scores the dense lines: energy MAPE against the readings and against the line's
expected energy (expected_curve.py, 7 settings each side), and whether the
setting of least predicted energy is within 1 % of the table's least and of the
expected line's least.

Then the same prediction as a guide for a search, as `auto` uses the clock map on
such a line (docs/search.md, "A GPU's clock map"; its numbers, not chosen here): 8
settings spread over the line measured, the 3 best predicted of the others measured
too, the least measured energy the answer; predicted once by the shape model fitted
to the 8, once as `auto` does (their readings over the map's factors, a local
quadratic through them, times the factors; dense_clock_map.py).
"""
import argparse
import csv
import sys
from collections import defaultdict

import numpy as np

from dense_clock_map import residuals
from expected_curve import local_quadratic

LONG_LINE = 30
SPAN = 7


def dense_lines(path):
    """(clocks, default index or None, {key: (times, powers)}) for the lines on the most common clock set."""
    lines, defaults = defaultdict(dict), defaultdict(set)
    with open(path, newline="", encoding="utf-8-sig") as f:
        for row in csv.DictReader(f):
            key = (row["gpu"], row["workload"], row["mem_mhz"])
            clock = int(row["core_mhz"])
            lines[key][clock] = (float(row["time_s"]), float(row["power_w"]))
            if row.get("default") == "1":
                defaults[key].add(clock)
    grids = defaultdict(list)
    for key, line in lines.items():
        if len(line) >= LONG_LINE:
            grids[tuple(sorted(line))].append(key)
    if not grids:
        raise SystemExit(f"dense_model_shape.py: no line of {LONG_LINE} or more clocks in {path}")
    clocks, keys = max(grids.items(), key=lambda item: len(item[1]))
    default_clocks = {c for k in keys for c in defaults[k]}
    default = clocks.index(default_clocks.pop()) if len(default_clocks) == 1 else None
    table = {k: (np.array([lines[k][c][0] for c in clocks]), np.array([lines[k][c][1] for c in clocks]))
             for k in keys}
    return np.array(clocks, dtype=float), default, table


def fitted_indices(count, default):
    """model_bench's even placement: 0, 1/3, 2/3, 1 of the line; the default replaces the nearest
    but the top."""
    chosen = [int(np.floor(n * (count - 1) / 3 + 0.5)) for n in range(4)]
    if default is not None and default not in chosen:
        nearest = min(range(3), key=lambda i: abs(chosen[i] - default))
        chosen[nearest] = default
    return sorted(set(chosen))


def least_squares(design, values):
    """Unconstrained: the shape is the other lines' median, not a split into static and dynamic power,
    so a line drawing less at rest than the median needs a negative intercept."""
    return np.linalg.lstsq(design, values, rcond=None)[0]


def power_shapes(powers):
    """Per line, (trend shape, fine shape) from the other lines: median power over the expected top power."""
    trends = {k: local_quadratic(p, SPAN) for k, p in powers.items()}
    keys = list(powers)
    shapes = {}
    for key in keys:
        others = [k for k in keys if k != key]
        trend = np.median([trends[k] / trends[k][-1] for k in others], axis=0)
        fine = np.median([powers[k] / trends[k][-1] for k in others], axis=0)
        shapes[key] = (trend, fine)
    return shapes


def shape_prediction(clocks, times, powers, shape, fitted):
    """Energy at every clock from time c + d / clock and power a + b * shape fitted at `fitted`."""
    time_fit = least_squares(np.vstack([np.ones(len(fitted)), 1 / clocks[fitted]]).T, times[fitted])
    power_fit = least_squares(np.vstack([np.ones(len(fitted)), shape[fitted]]).T, powers[fitted])
    return (time_fit[0] + time_fit[1] / clocks) * (power_fit[0] + power_fit[1] * shape)


def guided_search(readings, predicted, spread):
    """The least reading among the spread settings and the 3 best predicted others, against the
    table's least and the expected line's least."""
    measured = list(spread) + [i for i in np.argsort(predicted) if i not in set(spread)][:3]
    best = min(measured, key=lambda i: readings[i])
    expected = local_quadratic(readings, SPAN)
    return readings[best] <= 1.01 * readings.min(), expected[best] <= 1.01 * expected.min()


def score(clocks, times, powers, shape, fitted):
    """Energy MAPE against readings and expected line, and the predicted optimum's two checks."""
    predicted = shape_prediction(clocks, times, powers, shape, fitted)
    readings = times * powers
    expected = local_quadratic(readings, SPAN)
    held_out = np.ones(len(clocks), dtype=bool)
    held_out[fitted] = False
    best = int(np.argmin(predicted))
    return (100 * np.mean(np.abs(predicted[held_out] / readings[held_out] - 1)),
            100 * np.mean(np.abs(predicted[held_out] / expected[held_out] - 1)),
            readings[best] <= 1.01 * readings.min(),
            expected[best] <= 1.01 * expected.min())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    args = parser.parse_args()
    try:
        clocks, default, table = dense_lines(args.table)
    except (OSError, KeyError, ValueError) as e:
        raise SystemExit(f"dense_model_shape.py: cannot read {args.table} as a sweep table: {e}")
    if len(table) < 3:
        raise SystemExit("dense_model_shape.py: a shape from the other lines needs 3 or more lines")
    fitted = fitted_indices(len(clocks), default)
    shapes = power_shapes({k: powers for k, (_, powers) in table.items()})
    print(f"{len(table)} lines at the same {len(clocks)} clocks ({clocks[0]:.0f}-{clocks[-1]:.0f} MHz); "
          f"fitted at {', '.join(f'{clocks[i]:.0f}' for i in fitted)} MHz; each line's shape from the other "
          f"{len(table) - 1}")
    print("power shape                    energy MAPE med / p90: readings   expected line   "
          "optimum within 1 %: table's least   expected line's least")
    for name, which in (("the others' trend", 0), ("the others' readings", 1)):
        results = np.array([score(clocks, times, powers, shapes[key][which], fitted)
                            for key, (times, powers) in table.items()])
        print(f"{name:<30} {np.median(results[:, 0]):>26.2f} / {np.quantile(results[:, 0], 0.9):.2f}"
              f" {np.median(results[:, 1]):>9.2f} / {np.quantile(results[:, 1], 0.9):.2f}"
              f" {100 * results[:, 2].mean():>27.1f} % {100 * results[:, 3].mean():>21.1f} %")
    spread = np.unique(np.linspace(0, len(clocks) - 1, 8).round().astype(int))
    keys = list(table)
    readings = np.array([times * powers for times, powers in table.values()])
    residual = residuals(readings)
    by_map, by_shape = [], []
    for held_out, key in enumerate(keys):
        clock_map = np.delete(residual, held_out, 0).mean(0)
        trend = local_quadratic(readings[held_out][spread] / (1 + clock_map[spread]), 2)
        by_map.append(guided_search(readings[held_out],
                                    np.interp(np.arange(len(clocks)), spread, trend) * (1 + clock_map), spread))
        times, powers = table[key]
        by_shape.append(guided_search(readings[held_out],
                                      shape_prediction(clocks, times, powers, shapes[key][1], spread), spread))
    print("search guide (8 spread + 3 best predicted)   within 1 %: table's least   expected line's least")
    for name, results in (("the clock map, as auto", by_map), ("the shape model", by_shape)):
        results = np.array(results)
        print(f"{name:<44} {100 * results[:, 0].mean():>24.1f} % {100 * results[:, 1].mean():>21.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
