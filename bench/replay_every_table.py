#!/usr/bin/env python3
"""`dvfslab search` replayed on every workload of every published sweep table.

Issue 27 asks that every table the sweep-table format allows replays and searches
with no failure. This runs `search --device replay:TABLE#GPU --workload W` for each
(GPU, workload) of each table, letting search pick the knob the table varies (as a
user who passes no --knobs gets), each into its own database in a temporary folder:

    /usr/bin/python3 bench/replay_every_table.py build/release/src/dvfslab \
        [data/published/*.csv] [--jobs 2]

Prints, per table, how many searches ran and failed and the error of each failure;
exits 1 when any failed. How good the chosen settings are is
dense_replay_search.py's question, not this one's.
"""
import argparse
import glob
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from dense_replay_search import search, table_curves


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dvfslab")
    parser.add_argument("tables", nargs="*",
                        default=sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "data",
                                                              "published", "*.csv"))))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    missing = [table for table in args.tables if not os.path.isfile(table)]
    if missing:
        parser.error("no such table: " + ", ".join(missing))
    ran_total = failed_total = 0
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        for table in args.tables:
            curves = list(table_curves(table))
            results = list(pool.map(
                lambda curve: search(args.dvfslab, os.path.abspath(table), *curve, scratch), curves))
            failures = [f"{gpu} / {workload}: {error[0]}"
                        for (gpu, workload), (_, error) in zip(curves, results) if error]
            ran_total += len(curves)
            failed_total += len(failures)
            print(f"{os.path.basename(table)}: ran {len(curves)}, failed {len(failures)}")
            for line in failures:
                print("  failed: " + line)
    print(f"all tables: ran {ran_total}, failed {failed_total}")
    return 1 if failed_total else 0


if __name__ == "__main__":
    sys.exit(main())
