#!/usr/bin/env python3
"""What a search that fits the valley, instead of racing neighbours, would cost and
miss on the simulated H200's one-knob lines (issue 27's lead; not a dvfslab strategy).

`auto` ends a 110-setting line with fine steps whose comparisons take up to 4 windows
each (docs/search.md), about 20 % of the exhaustive sweep's GPU time. This emulates
the alternative on the exhaustive sweep's own readings (one window per setting, the
simulator's noise): K settings spread evenly over the line, one window each; around
the best of them, a quadratic through it and its two spread neighbours; F settings
at and around that quadratic's vertex, one window each; the choice is the vertex of
a least-squares quadratic over every measured setting of that bracket (the least
reading there when the fit is not convex), confirmed with one more window. Each
(K, F) is scored like bench/h200_search.py: regret on the line smoothed by a local
quadratic, and GPU time against the exhaustive sweep, with the default measured as
the exhaustive sweep measured it.

    cd bench && python3 h200_fitted_finish.py ../build/release/src/dvfslab [--lines FILE]
"""
import argparse
import json
import os
import statistics
import tempfile

import numpy as np

from h200_search import CASES, expected_regret_pct, run

KNOBS = ("sm", "pl")
VARIANTS = [(k, f) for k in (5, 6, 8) for f in (1, 2, 3)]


def measured_lines(binary, path):
    """Per knob and case: the exhaustive sweep's line and its cost, and the cost of
    `auto` on the same plan (cached in `path`)."""
    if path and os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    lines = []
    with tempfile.TemporaryDirectory() as workdir:
        for knob in KNOBS:
            index = 0 if knob == "sm" else 1
            for workload, mode in CASES:
                grid = run(binary, workdir, knob, workload, mode, "grid")
                auto = run(binary, workdir, knob, workload, mode, "auto")
                points = sorted((s[index], e) for s, e in grid["energies"].items() if s[index] is not None)
                lines.append({"knob": knob, "workload": workload, "mode": mode,
                              "values": [v for v, _ in points], "energies": [e for _, e in points],
                              "default_energy": grid["energies"][(None, None)],
                              "windows": grid["windows"], "gpu_s": grid["gpu_s"],
                              "auto": {key: auto[key] for key in ("probes", "windows", "gpu_s", "chosen")}})
    if path:
        with open(path, "w") as f:
            json.dump(lines, f)
    return lines


def energies_of(line):
    """The line as bench/h200_search.py's energy per setting."""
    return {(v, None) if line["knob"] == "sm" else (None, v): e for v, e in zip(line["values"], line["energies"])}


def seconds_of_a_setting_and_a_window(line):
    """A setting's GPU seconds with its first window (settle and warm-up included) and
    those of one more window, from the two runs of the same plan: the exhaustive
    sweep and `auto` (settings and windows against their GPU seconds)."""
    auto = line["auto"]
    settings = [len(line["values"]) + 1, auto["probes"]]
    design = [[count, windows - count] for count, windows in zip(settings, [line["windows"], auto["windows"]])]
    return np.linalg.solve(np.array(design, dtype=float), np.array([line["gpu_s"], auto["gpu_s"]]))


def fitted_vertex(xs, ys, low, high):
    """Index of the least point of a least-squares quadratic through (xs, ys) within
    [low, high]; None where the fit is not convex."""
    curvature, slope, _ = np.polyfit(xs, ys, 2)
    if curvature <= 0:
        return None
    return int(round(min(max(-slope / (2 * curvature), low), high)))


def emulate(line, spread, finish):
    """The fitted search on one line: the index it chooses, the index of its least
    reading (what `dvfslab analyze` reports of a search: the measured setting of
    least mean), the settings it measured and its windows."""
    energies = np.asarray(line["energies"])
    top = len(energies) - 1
    measured = {int(i) for i in np.round(np.linspace(0, top, spread))}
    coarse = sorted(measured)
    best = min(range(len(coarse)), key=lambda i: energies[coarse[i]])
    low, high = coarse[max(best - 1, 0)], coarse[min(best + 1, len(coarse) - 1)]
    bracket = [i for i in coarse if low <= i <= high]
    centre = fitted_vertex(bracket, energies[bracket], low, high) if len(bracket) == 3 else None
    centre = coarse[best] if centre is None else centre
    quarter = max((high - low) // 4, 1)
    for offset in [0, -quarter, quarter][:finish]:
        measured.add(min(max(centre + offset, low), high))
    near = sorted(i for i in measured if low <= i <= high)
    chosen = fitted_vertex(near, energies[near], low, high) if len(near) >= 3 else None
    if chosen is None:
        chosen = min(near, key=lambda i: energies[i])
    windows = len(measured) + (1 if chosen in measured else 2)
    measured.add(chosen)
    least = min(measured, key=lambda i: energies[i])
    return chosen, least, len(measured), windows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--lines", help="cache of the exhaustive sweeps' lines (JSON), written when absent")
    args = parser.parse_args()
    lines = measured_lines(args.binary, args.lines)
    print(f"# {len(lines)} lines of the simulated H200, the exhaustive sweep's one window per setting")
    print("# 'fitted': the fit's choice; 'least': the least reading among the settings measured (the "
          "confirmation's second window is not emulated: the sweep has one per setting)")
    print("knob  spread  finish  fitted within 1 %  regret med/max  least within 1 %  regret med/max  "
          "settings med/max  windows med/max  GPU time vs exhaustive med/max")
    for knob in KNOBS:
        own = [line for line in lines if line["knob"] == knob]
        auto_regrets = [expected_regret_pct(energies_of(line), knob, tuple(line["auto"]["chosen"])) for line in own]
        auto_shares = [100 * line["auto"]["gpu_s"] / line["gpu_s"] for line in own]
        print(f"{knob:5} auto (dvfslab's, for reference)  {sum(r <= 1 for r in auto_regrets):>3}/{len(own):<7}"
              f"  {statistics.median(auto_regrets):5.2f} / {max(auto_regrets):5.2f} %"
              f"  probes {statistics.median(line['auto']['probes'] for line in own):.0f}"
              f" / {max(line['auto']['probes'] for line in own)}"
              f"  windows {statistics.median(line['auto']['windows'] for line in own):.0f}"
              f" / {max(line['auto']['windows'] for line in own)}"
              f"  GPU time {statistics.median(auto_shares):.1f} / {max(auto_shares):.1f} %")
        for spread, finish in VARIANTS:
            fitted, least, settings, windows, shares = [], [], [], [], []
            for line in (line for line in lines if line["knob"] == knob):
                energies = energies_of(line)

                def regret(index):
                    value = line["values"][index]
                    return expected_regret_pct(energies, knob, (value, None) if knob == "sm" else (None, value))

                chosen, lowest, count, used = emulate(line, spread, finish)
                fitted.append(regret(chosen))
                least.append(regret(lowest))
                default_windows = line["windows"] - len(line["values"])
                settings.append(count + 1)
                windows.append(used + default_windows)
                setting_s, window_s = seconds_of_a_setting_and_a_window(line)
                shares.append(100 * ((count + 1) * setting_s + (used + default_windows - count - 1) * window_s)
                              / line["gpu_s"])
            print(f"{knob:5} {spread:6} {finish:7}  {sum(r <= 1 for r in fitted):>9}/{len(fitted):<7}"
                  f"  {statistics.median(fitted):5.2f} / {max(fitted):5.2f} %"
                  f"  {sum(r <= 1 for r in least):>8}/{len(least):<7}"
                  f"  {statistics.median(least):5.2f} / {max(least):5.2f} %"
                  f"  {statistics.median(settings):7.0f} / {max(settings):<5}"
                  f"  {statistics.median(windows):6.0f} / {max(windows):<5}"
                  f"  {statistics.median(shares):5.1f} / {max(shares):.1f} %")

if __name__ == "__main__":
    main()
