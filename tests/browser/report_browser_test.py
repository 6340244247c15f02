#!/usr/bin/env python3
"""Browser test of `dvfslab report`: imports a published sweep table, writes
report.html, opens it from disk in headless chromium with networking disabled, and
checks that every expected chart rendered without a console or script error. A
screenshot is kept next to the report as a test artifact.

Usage: report_browser_test.py DVFSLAB CHROMIUM SWEEP_TABLE.csv WORK_DIR
"""
import csv
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile


def expected_chart_count(table: pathlib.Path) -> int:
    """Four charts per GPU x workload (power, throughput, energy, Pareto), two more
    (memory-clock figure, core x memory heatmap) where core and memory clock both vary."""
    knobs = {}
    with table.open(newline="") as f:
        for row in csv.DictReader(f):
            cores, mems = knobs.setdefault((row["source"], row["gpu"], row["workload"]), (set(), set()))
            cores.add(row["core_mhz"])
            mems.add(row["mem_mhz"])
    return sum(6 if len(c) > 1 and len(m) > 1 else 4 for c, m in knobs.values())


def chromium(binary: str, profile: str, *arguments: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=60000"]
    return subprocess.run([binary, *flags, *arguments], capture_output=True, text=True, timeout=300)


def main() -> int:
    dvfslab, chromium_binary, table, work = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
    work.mkdir(parents=True, exist_ok=True)
    name = table.stem
    database = work / f"{name}.sqlite"
    report = work / f"{name}-report.html"
    database.unlink(missing_ok=True)
    subprocess.run([dvfslab, "import", str(table), "--db", str(database)], check=True)
    subprocess.run([dvfslab, "report", str(database), "-o", str(report)], check=True)

    html = report.read_text(encoding="utf-8")
    failures = []
    external = re.findall(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', html)
    if external:
        failures.append(f"report references {len(external)} external resources; it must be self-contained")

    expected = expected_chart_count(table)
    profile = tempfile.mkdtemp(prefix="dvfslab-chromium-")
    try:
        dom_run = chromium(chromium_binary, profile, "--dump-dom", report.resolve().as_uri())
        shutil.rmtree(profile, ignore_errors=True)
        profile = tempfile.mkdtemp(prefix="dvfslab-chromium-")
        screenshot = work / f"{name}-report.png"
        chromium(chromium_binary, profile, "--window-size=1400,2400", f"--screenshot={screenshot}",
                 report.resolve().as_uri())
    finally:
        shutil.rmtree(profile, ignore_errors=True)

    dom = dom_run.stdout
    status = re.search(r'<div id="dvfslab-status"([^>]*)>([^<]*)', dom)
    if not status:
        failures.append("the page's status element is missing from the rendered DOM")
    else:
        attributes = dict(re.findall(r'data-(\w+)="([^"]*)"', status.group(1)))
        if attributes.get("done") != "true":
            failures.append(f"rendering did not finish within the time budget (status {attributes})")
        if attributes.get("errors") != "0":
            failures.append(f"script errors on the page: {status.group(2).strip() or attributes}")
        if attributes.get("rendered") != str(expected) or attributes.get("expected") != str(expected):
            failures.append(f"expected {expected} charts, page says {attributes}")
    marks = dom.count('class="marks"')
    if marks != expected:
        failures.append(f"expected {expected} rendered SVG charts, found {marks}")
    console_errors = [line for line in dom_run.stderr.splitlines()
                      if "CONSOLE" in line and ("Uncaught" in line or "ERROR" in line or "error" in line.lower())]
    if console_errors:
        failures.append("console errors:\n  " + "\n  ".join(console_errors[:10]))
    if not (work / f"{name}-report.png").is_file():
        failures.append("chromium wrote no screenshot")

    if failures:
        print(f"{table.name}: FAILED\n" + "\n".join(failures))
        return 1
    print(f"{table.name}: {expected} charts rendered, no errors; screenshot {work / (name + '-report.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
