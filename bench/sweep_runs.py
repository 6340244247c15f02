"""What the bench scripts read back from a `dvfslab sweep`: its printed totals, the
mean energy per item of each point in its store, and the optima `dvfslab analyze`
reports for it."""
import json
import re
import sqlite3
import statistics
import subprocess
import sys

SUMMARY = re.compile(r"(\d+) points measured \((\d+) windows, ([\d.]+) s of simulated GPU time\)")


def sweep(binary, plan, device, strategy, db, caller, extra=()):
    """Runs `dvfslab sweep` of `plan` into `db` (`extra`: more arguments); its totals
    {points, windows, gpu_s}. A failed sweep ends the script with one line naming `caller`."""
    done = subprocess.run([binary, "sweep", plan, "--device", device, "--strategy", strategy, "--db", db,
                           *extra], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{caller}: the {strategy} sweep failed: {done.stderr.strip()}")
    points, windows, gpu_s = SUMMARY.search(done.stdout).groups()
    return {"points": int(points), "windows": int(windows), "gpu_s": float(gpu_s)}


def mean_energy_per_item(db, columns, where="1"):
    """{the values of `columns` of a point: its mean energy per item over its
    windows}, for the points matching the SQL condition `where` (on `p`, the points)."""
    selected = ", ".join(f"p.{column}" for column in columns)
    rows = sqlite3.connect(db).execute(
        f"select {selected}, m.energy_j / m.items from points p join measurements m on m.point_id = p.id "
        f"where m.items > 0 and ({where})").fetchall()
    windows = {}
    for *key, energy in rows:
        windows.setdefault(tuple(key), []).append(energy)
    return {key: statistics.fmean(values) for key, values in windows.items()}


def analyzed_cases(binary, db):
    """The cases of `dvfslab analyze --json` of `db`, each with its optimum."""
    return json.loads(subprocess.run([binary, "analyze", db, "--json"], capture_output=True, text=True,
                                     check=True).stdout)["cases"]
