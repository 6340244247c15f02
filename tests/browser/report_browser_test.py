#!/usr/bin/env python3
"""Browser test of `dvfslab report`: builds a database (imports a published sweep
table, or runs a simulated search or dense sweep), writes report.html, opens it from
disk in headless chromium with networking disabled, and checks that every expected
chart rendered without a console or script error, and what a reader sees in each
chart's SVG (figure_checks.js measures it in the same browser run): the default and
optimum markers, legends in numeric order, no overlapping tick labels, no `null`
label, a note naming every point left off an axis, and error bars where the data
has intervals that disappear when the page's interval checkbox is unticked. A screenshot is kept next to
the report as a test artifact.

Usage: report_browser_test.py DVFSLAB CHROMIUM (SWEEP_TABLE.csv | search | dense) WORK_DIR
"""
import csv
import html as html_text
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile


def expected_chart_count(table: pathlib.Path) -> int:
    """Four charts per GPU x workload (power, throughput, energy, Pareto), two more
    (memory-clock figure, core x memory heatmap) where core and memory clock both vary;
    per GPU one normalised chart per case (a sweep table's case: one workload) with a
    row marked as the default and, where there is one, the Pareto chart of those cases;
    and the summary chart (every case has an energy optimum)."""
    knobs, defaults = {}, {}
    with table.open(newline="") as f:
        for row in csv.DictReader(f):
            cores, mems = knobs.setdefault((row["source"], row["gpu"], row["workload"]), (set(), set()))
            cores.add(row["core_mhz"])
            mems.add(row["mem_mhz"])
            if row["default"] == "1":
                defaults.setdefault((row["source"], row["gpu"]), set()).add(row["workload"])
    per_group = sum(6 if len(c) > 1 and len(m) > 1 else 4 for c, m in knobs.values())
    normalised = sum(len(cases) + 1 for cases in defaults.values())
    return per_group + normalised + 1


def chromium(binary: str, profile: str, *arguments: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=60000"]
    return subprocess.run([binary, *flags, *arguments], capture_output=True, text=True, timeout=300)


# The study's 17 cases in 8 network x mode groups: 4 charts a group (the V100 has
# one memory clock, so no memory-clock figures); relative to the default, 17 per-case
# figures, 3 overlaid per network x precision with two or more cases (4 networks),
# the Pareto fronts; the summary.
STUDY_CHARTS = 8 * 4 + 17 + 3 * 4 + 1 + 1

# Simulated scenarios: the commands that fill the database, the report's extra
# options, and the charts of their one GPU x workload.
SCENARIOS = {
    # Two searches of one workload on the simulated V100: each first probes 135 MHz,
    # far below the valley around 900 MHz it then finds; the batch sizes 64 and 128
    # sort differently as text and as numbers.
    "search": {
        "commands": [["search", "--device", "sim:v100", "--workload", "resnet50", "--batch", batch]
                     for batch in ("128", "64")],
        "report": [],
        # 4 charts of the group; relative to the default: 3 overlaying both batch
        # sizes, 1 per case, the Pareto fronts; the summary.
        "charts": 4 + 3 + 2 + 1 + 1,
    },
    # Every core clock at both memory clocks of the simulated H200 (110 x 2), and an
    # objective whose optimum is the default (nothing is faster than 1980/3201 MHz):
    # dense axes, 110 lines against the memory clock, and coinciding markers.
    "dense": {
        "commands": [["search", "--device", "sim:h200", "--workload", "resnet50", "--batch", "32",
                      "--knobs", "sm,mem", "--strategy", "grid"]],
        "report": ["--objective", "energy-within-slowdown:0%"],
        # 6 charts of the group; its one case relative to the default, the Pareto
        # front; the summary.
        "charts": 6 + 1 + 1 + 1,
    },
    # The built-in study on the simulated V100 (AlexNet, GoogLeNet, ResNet-50 and
    # VGG-16, training and inference, the study's batch sizes), which writes its own
    # database under --out.
    "study": {
        "commands": [["study", "--device", "sim:v100", "--out", "{out}"]],
        "database": "{out}/dvfslab.sqlite",
        "report": [],
        "charts": STUDY_CHARTS,
    },
}


def numbers_in(label: str) -> list:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", label.replace(",", ""))]


def natural_key(label: str) -> list:
    """The label as its text and number parts, numbers compared as numbers: "train ·
    batch 16" before "train · batch 128", and every "infer" label before any "train"."""
    parts = re.split(r"(-?\d+(?:\.\d+)?)", label.replace(",", ""))
    return [(0, float(part), "") if index % 2 else (1, 0.0, part) for index, part in enumerate(parts)]


def markers_expected(report: pathlib.Path) -> dict:
    """Per chart id, from the page's data: the defaults, optima, and the points that
    are both, among the points the chart plots (its group's, or those its `select`
    picks: one case, one network), whether a default that left the memory clock
    uncontrolled has no place on a memory-clock axis (no memory clock measured there:
    a sweep table), and whether it is a chart relative to the default. None for the
    summary chart, which has no settings to mark."""
    page = report.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="dvfslab-data">(.*?)</script>', page, re.S).group(1))
    groups = {group["name"]: group for group in data["groups"]}
    expected = {}
    for figure in data["figures"]:
        group = groups[figure["data"]]
        columns, labels = group["columns"], group["labels"]
        if "baseline" not in columns:
            expected[figure["id"]] = None
            continue
        rows = range(len(columns["baseline"]))
        select = figure.get("select")
        if select:
            rows = [i for i in rows if labels[columns[select["field"]][i]] == select["equal"]]
        normalised = "energy_ratio" in columns
        marker_mem = columns.get("marker_mem_mhz", columns.get("mem_mhz"))
        marks = [(columns["baseline"][i], columns["optimum"][i], marker_mem[i] if marker_mem else None)
                 for i in rows]
        expected[figure["id"]] = {
            "default": sum(b for b, _, _ in marks), "optimum": sum(o for _, o, _ in marks),
            "both": sum(b and o for b, o, _ in marks),
            "default_without_memory_clock": not normalised and any(b and m is None for b, _, m in marks),
            "intervals": "energy_per_item_j_ci" in columns or "energy_ratio_ci" in columns,
            "normalised": normalised}
    return expected


def figure_failures(figures: list, scenario: str, expected_markers: dict) -> list:
    failures = []
    for figure in figures:
        where = f"{figure['id']} ({figure['title']})"
        want = expected_markers[figure["id"]]
        if want is None:
            # The summary: a point per GPU x mode x network for its saving and its slowdown.
            if figure["summary_points"] == 0 or figure["interval_bars"]:
                failures.append(f"{where}: {figure['summary_points']} summary points, "
                                f"{figure['interval_bars']} error bars")
            continue
        # Every default marker of a chart relative to the default stands at 1.0.
        if want["normalised"] and figure["defaults_at_one"] is not True:
            failures.append(f"{where}: the default markers are not at 1.0 ({figure['defaults_at_one']})")
        if "core × memory" in figure["title"]:
            cells = figure["outlined_cells"]
            if (cells["default"], cells["optimum"], cells["both"]) != \
                    (want["default"] - want["both"], want["optimum"] - want["both"], want["both"]):
                failures.append(f"{where}: heatmap outlines {cells}, the data has {want}")
        else:
            placed_defaults = want["default"]
            if "vs memory clock" in figure["title"] and want["default_without_memory_clock"]:
                placed_defaults = 0
            if figure["default_markers"] != placed_defaults or figure["optimum_markers"] != want["optimum"]:
                failures.append(f"{where}: {figure['default_markers']} default and {figure['optimum_markers']} "
                                f"optimum markers, the data has {want}")
        # Error bars on every chart but the heatmap wherever a point has an interval,
        # and none once the page's control is off.
        bars, hidden = figure["interval_bars"], figure["interval_bars_when_hidden"]
        if want["intervals"] and "core × memory" not in figure["title"]:
            if bars == 0:
                failures.append(f"{where}: no error bars, though the data has intervals")
            if hidden != 0:
                failures.append(f"{where}: {hidden} error bars left with the interval control off")
        elif bars:
            failures.append(f"{where}: {bars} error bars where the data has no intervals")
        for legend in figure["legends"]:
            if legend["symbols"] > 10:
                failures.append(f"{where}: a legend of {legend['symbols']} entries")
            numbered = [numbers_in(label) for label in legend["labels"]]
            keys = [natural_key(label) for label in legend["labels"]]
            if legend["symbols"] > 1 and all(numbered) and keys != sorted(keys):
                failures.append(f"{where}: legend not in numeric order: {legend['labels']}")
        if not any(set(legend["labels"]) >= {"default", "optimum"} for legend in figure["legends"]):
            failures.append(f"{where}: no legend entries 'default' and 'optimum'")
        for axis in figure["axes"]:
            if axis["overlaps"]:
                failures.append(f"{where}: {axis['overlaps']} overlapping tick labels of {axis['shown']}")
            if "null" in axis["texts"]:
                failures.append(f"{where}: an axis label reads null")
        # The search's group has only charts against the core clock and the Pareto chart,
        # all of which leave the far probe out.
        if scenario == "search" and figure["clip_notes"] != ["1 probe outside the axis: 135 MHz"]:
            failures.append(f"{where}: the 135 MHz probe is not named: {figure['clip_notes']}")
        if scenario != "search" and figure["clip_notes"]:
            failures.append(f"{where}: points left off a full sweep: {figure['clip_notes']}")
    # The simulated searches repeat every probe, so their charts must show intervals.
    if scenario != "table" and not all(want["intervals"] for want in expected_markers.values() if want):
        failures.append("a searched group's data has no confidence intervals")
    if scenario == "dense":
        # Its default leaves the memory clock uncontrolled: the memory clock measured
        # there, the GPU's default, places its marker on the memory-clock chart.
        if any(want and want["default_without_memory_clock"] for want in expected_markers.values()):
            failures.append("the dense sweep's default has no measured memory clock to stand at")
        heatmap_axes = [axis for figure in figures if "core × memory" in figure["title"] for axis in figure["axes"]]
        if not any(axis["labels"] >= 110 and axis["shown"] < axis["labels"] for axis in heatmap_axes):
            failures.append(f"the dense heatmap's 110 core clocks were not thinned: {heatmap_axes}")
    return failures


def main() -> int:
    dvfslab, chromium_binary, scenario, work = sys.argv[1], sys.argv[2], sys.argv[3], pathlib.Path(sys.argv[4])
    work.mkdir(parents=True, exist_ok=True)
    table = pathlib.Path(scenario)
    name = scenario if scenario in SCENARIOS else table.stem
    database = work / f"{name}.sqlite"
    report = work / f"{name}-report.html"
    database.unlink(missing_ok=True)
    report_options = []
    if scenario in SCENARIOS:
        out = work / f"{name}-out"
        shutil.rmtree(out, ignore_errors=True)
        if "database" in SCENARIOS[scenario]:
            database = pathlib.Path(SCENARIOS[scenario]["database"].format(out=out))
        for command in SCENARIOS[scenario]["commands"]:
            command = [word.format(out=out) for word in command]
            where = [] if "database" in SCENARIOS[scenario] else ["--db", str(database)]
            run = subprocess.run([dvfslab, *command, *where], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"{name}: `dvfslab {' '.join(command)}` failed:\n{run.stderr}")
                return 1
        report_options = SCENARIOS[scenario]["report"]
        expected = SCENARIOS[scenario]["charts"]
    else:
        subprocess.run([dvfslab, "import", str(table), "--db", str(database)], check=True)
        expected = expected_chart_count(table)
    subprocess.run([dvfslab, "report", str(database), "-o", str(report), *report_options], check=True)
    checked = work / f"{name}-report-checked.html"
    checks_script = (pathlib.Path(__file__).parent / "figure_checks.js").read_text(encoding="utf-8")
    # Before the page's own last </body> (the embedded runtimes contain the text too).
    page, tail = report.read_text(encoding="utf-8").rsplit("</body>", 1)
    checked.write_text(f"{page}<script>{checks_script}</script>\n</body>{tail}", encoding="utf-8")

    html = report.read_text(encoding="utf-8")
    failures = []
    external = re.findall(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', html)
    if external:
        failures.append(f"report references {len(external)} external resources; it must be self-contained")

    profile = tempfile.mkdtemp(prefix="dvfslab-chromium-")
    try:
        dom_run = chromium(chromium_binary, profile, "--dump-dom", checked.resolve().as_uri())
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
    checks = re.search(r'<pre id="figure-checks">([^<]*)</pre>', dom)
    if not checks:
        failures.append("the figure checks did not run")
    else:
        figures = json.loads(html_text.unescape(checks.group(1)))
        if len(figures) != expected:
            failures.append(f"the figure checks measured {len(figures)} charts, expected {expected}")
        failures += figure_failures(figures, scenario if scenario in SCENARIOS else "table",
                                    markers_expected(report))

    if failures:
        print(f"{name}: FAILED\n" + "\n".join(failures))
        return 1
    coinciding = sum(want["both"] for want in markers_expected(report).values() if want)
    print(f"{name}: {expected} charts rendered, no errors, {coinciding} coinciding default and optimum markers "
          f"checked; screenshot {work / (name + '-report.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
