#!/usr/bin/env python3
"""Runs the docs' marked command examples and checks the figures they show.

    doc_examples.py DVFSLAB_BINARY REPO_ROOT [DOC.md ...] [--program=PATH ...] [--update]

A marked example is a fenced block right after an HTML comment

    <!-- doc-example -->                      figures as precise as they are written
    <!-- doc-example: tolerance=2% -->        or within 2 % of the fresh figure

whose lines starting with `$ ` are commands and whose other lines are what the command before them printed
(standard output and error together), a selection of it in its order. Each example
runs in a fresh temporary folder holding links to the repository's data/ and docs/,
with the built dvfslab (and each --program, e.g. an example built with the tests)
first on PATH, on simulated GPUs or published tables only
(the commands of one example share the folder).

A shown line matches the next fresh line that reads the same with its figures left
out; every figure must then equal the fresh one to the decimals shown (84.2 stands
for 84.15 to 84.25), or be within the stated tolerance; a figure written ~2.1 (a
wall-clock time) is not compared. A shown line whose words
changed matches the next fresh line that starts with the same words and counts as
drifted. Failures name the doc, the example's line, the shown and the fresh figure.

With --update the shown lines that drifted are replaced by their fresh lines in
place, so regenerating every doc's figures after a change is one command.
"""
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

MARKER = re.compile(r"^<!--\s*doc-example(?::\s*(?P<options>.*?))?\s*-->\s*$")
# A figure: not part of a word (resnet50, V100), optionally signed, with thousands
# separators or decimals; "~" before a shown figure (a wall-clock time) lets it vary.
FIGURE = re.compile(r"(?<![\w.])~?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
COMMAND_TIMEOUT_S = 300


@dataclass
class Command:
    text: str
    doc_line: int  # 1-based line of the `$ ` line in the doc
    shown: list = field(default_factory=list)  # (doc line, text) of the output shown


@dataclass
class Example:
    doc: Path
    line: int  # the marker's line
    relative_tolerance: float
    commands: list


def parse_options(text, doc, line):
    tolerance = 0.0
    for option in (text or "").split():
        name, _, value = option.partition("=")
        if name == "tolerance" and value.endswith("%"):
            tolerance = float(value[:-1]) / 100
        else:
            sys.exit(f"{doc}:{line}: unknown doc-example option '{option}' (known: tolerance=PCT%)")
    return tolerance


def read_examples(doc):
    lines = doc.read_text().splitlines()
    examples = []
    for index, line in enumerate(lines):
        marker = MARKER.match(line)
        if not marker:
            continue
        tolerance = parse_options(marker.group("options"), doc, index + 1)
        if index + 1 >= len(lines) or not lines[index + 1].startswith("```"):
            sys.exit(f"{doc}:{index + 1}: a doc-example marker must be followed by a fenced block")
        commands = []
        position = index + 2
        while position < len(lines) and not lines[position].startswith("```"):
            text = lines[position]
            if text.startswith("$ "):
                commands.append(Command(text[2:], position + 1))
            elif not commands:
                sys.exit(f"{doc}:{position + 1}: a doc-example block starts with a `$ ` command line")
            else:
                commands[-1].shown.append((position + 1, text))
            position += 1
        examples.append(Example(doc, index + 1, tolerance, commands))
    return examples


def template(line):
    return FIGURE.sub("#", line).rstrip()


def leading_words(line):
    return re.split(r"\d", line, maxsplit=1)[0].strip()


def figure_value(text):
    return float(text.replace(",", "").lstrip("+"))


def decimals(text):
    return len(text.split(".")[1]) if "." in text else 0


def compare_figures(shown, fresh, tolerance):
    """(shown, fresh, allowed difference) of the figures that drifted beyond it."""
    drifted = []
    for shown_figure, fresh_figure in zip(FIGURE.findall(shown), FIGURE.findall(fresh)):
        if shown_figure.startswith("~"):
            continue
        expected, actual = figure_value(shown_figure), figure_value(fresh_figure)
        allowed = max(0.5 * 10 ** -decimals(shown_figure), tolerance * abs(expected))
        if abs(actual - expected) > allowed + 1e-9:
            drifted.append((shown_figure, fresh_figure, allowed))
    return drifted


def example_folder(folder, programs, repo):
    """Prepares `folder` for an example's commands; returns their environment."""
    for name in ("data", "docs", "examples"):
        os.symlink(repo / name, Path(folder) / name)
    bin_dir = Path(folder) / ".bin"
    bin_dir.mkdir()
    for program in programs:
        os.symlink(program, bin_dir / program.name)
    environment = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                       DVFSLAB_STATE_DIR=str(Path(folder) / ".state"))
    # No real GPU is ever touched: any NVML the machine has is hidden.
    environment["DVFSLAB_NVML_LIBRARY"] = str(Path(folder) / "no-libnvidia-ml.so.1")
    environment.pop("DVFSLAB_READ_ONLY", None)
    return environment


def run_command(command, folder, environment):
    result = subprocess.run(["bash", "-c", command.text], cwd=folder, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=COMMAND_TIMEOUT_S)
    return result.returncode, result.stdout.splitlines()


def check_command(example, command, fresh, problems, updates):
    """Adds a problem per drifted figure or changed line; `updates` gets the fresh
    line for each doc line that --update can rewrite."""
    source = f"in the output of `{command.text}` (example at {example.doc}:{example.line})"
    unused = list(range(len(fresh)))

    def take(matches):
        index = next((i for i in unused if matches(fresh[i])), None)
        if index is not None:
            unused.remove(index)
        return index

    for doc_line, shown in command.shown:
        match = take(lambda line: template(line) == template(shown))
        if match is None and leading_words(shown):
            match = take(lambda line: leading_words(line) == leading_words(shown))
            if match is not None:
                problems.append(f"{example.doc}:{doc_line}: the line changed {source}:\n"
                                f"    shown: {shown}\n    fresh: {fresh[match]}")
                updates[doc_line] = fresh[match]
                continue
        if match is None:
            problems.append(f"{example.doc}:{doc_line}: no line like it any more {source}:\n"
                            f"    shown: {shown}")
            continue
        drifted = compare_figures(shown, fresh[match], example.relative_tolerance)
        for shown_figure, fresh_figure, allowed in drifted:
            problems.append(f"{example.doc}:{doc_line}: figure {shown_figure} is now {fresh_figure} "
                            f"(allowed ±{allowed:g}) {source}:\n    shown: {shown}\n    fresh: {fresh[match]}")
        if drifted:
            updates[doc_line] = fresh[match]


def rewrite(doc, updates):
    lines = doc.read_text().splitlines(keepends=True)
    for doc_line, text in updates.items():
        lines[doc_line - 1] = text + "\n"
    doc.write_text("".join(lines))


def main():
    update = "--update" in sys.argv[1:]
    programs = [Path(a.split("=", 1)[1]).resolve() for a in sys.argv[1:] if a.startswith("--program=")]
    arguments = [a for a in sys.argv[1:] if a != "--update" and not a.startswith("--program=")]
    if len(arguments) < 2:
        sys.exit(__doc__)
    binary, repo = Path(arguments[0]).resolve(), Path(arguments[1]).resolve()
    programs.insert(0, binary)
    docs = [Path(d) for d in arguments[2:]] or sorted((repo / "docs").glob("*.md"))
    problems = []
    left = 0  # problems --update cannot fix: a failed command, a line with no counterpart
    examples = 0
    for doc in docs:
        updates = {}
        for example in read_examples(doc):
            examples += 1
            with tempfile.TemporaryDirectory(prefix="doc-example-") as folder:
                environment = example_folder(folder, programs, repo)
                for command in example.commands:
                    status, fresh = run_command(command, folder, environment)
                    if status != 0:
                        problems.append(f"{doc}:{command.doc_line}: `{command.text}` exited "
                                        f"{status}:\n    " + "\n    ".join(fresh[-10:]))
                        left += 1
                        continue
                    before = len(problems)
                    check_command(example, command, fresh, problems, updates)
                    left += sum(1 for problem in problems[before:] if "no line like it" in problem)
        if update and updates:
            rewrite(doc, updates)
            print(f"updated {len(updates)} line(s) of {doc}")
    if examples == 0:
        sys.exit("doc_examples: no marked examples found (<!-- doc-example --> before a fenced block)")
    for problem in problems:
        print(problem)
    print(f"doc_examples: {examples} examples, {len(problems)} problems"
          + (f", {len(problems) - left} fixed in place" if update else ""))
    return 1 if (left if update else problems) else 0

if __name__ == "__main__":
    sys.exit(main())
