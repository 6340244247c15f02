#!/usr/bin/env python3
"""Walks the README's Quick start line by line, as a new user would after its main
set-up command, on a machine without an NVIDIA GPU.

    quickstart_test.py DVFSLAB_BINARY REPO_ROOT PYTHON PYTHON_MODULE_DIR

The lines run in order in one temporary folder that holds links to the repository's
data/, docs/ and examples/ and, as build/release/python, to PYTHON_MODULE_DIR (the
module of this build). `dvfslab` is put on PATH by scripts/link-on-path.sh, as
scripts/main.sh does; `python3` is PYTHON, the interpreter the module was built for.

Every file a line names as input must exist, and every line must exit 0, except two
answers that say in one line how to go on: a line that needs a real GPU (no
--device) exits 4 with the simulated-GPU hint, and `run-workload` in a build without
LibTorch exits 2 saying how to build it. In a build
with LibTorch, the run-workload line runs shrunk (batch 2, 64-pixel images, one
iteration) so that the CPU finishes it in seconds.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

LINE_TIMEOUT_S = 300


def quick_start_lines(readme):
    text = readme.read_text()
    section = text.split("\n## Quick start\n", 1)
    if len(section) != 2:
        sys.exit(f"{readme}: no '## Quick start' section")
    block = re.search(r"```sh\n(.*?)```", section[1], re.S)
    if not block:
        sys.exit(f"{readme}: the Quick start has no ```sh block")
    lines = []
    for line in block.group(1).splitlines():
        command = re.sub(r"\s+#\s.*$", "", line).strip()
        if command:
            lines.append(command)
    return lines


def shrink_run_workload(command):
    for option, value in (("--batch", "2"), ("--iters", "1")):
        command = re.sub(rf"{option} \d+", f"{option} {value}", command)
    return command + " --warmup 0 --image-size 64"


def one_error_line(output):
    """The output's only line when it is a dvfslab error, else an empty string."""
    lines = output.splitlines()
    return lines[0] if len(lines) == 1 and lines[0].startswith("dvfslab: error:") else ""


def missing_inputs(command, folder):
    """The script, plan and table files the line names that do not exist (a replayed
    table by its path after `replay:`): a line that stops early for want of a GPU
    must not hide one."""
    paths = [word.removeprefix("replay:").split("#")[0] for word in shlex.split(command)]
    return [path for path in paths if path.endswith((".py", ".toml", ".csv")) and not (folder / path).exists()]


def check_line(command, result, folder):
    """What is wrong with how the line ended, or None."""
    if missing := missing_inputs(command, folder):
        return f"names files that do not exist: {', '.join(missing)}"
    words = shlex.split(command)
    dvfslab_words = words[words.index("dvfslab") + 1:] if "dvfslab" in words else []
    error = one_error_line(result.stderr)
    if result.returncode == 0:
        return None
    if result.returncode == 4 and "--device" not in dvfslab_words and \
            "use a simulated one with --device sim:NAME" in error:
        return None  # needs a real GPU, and says how to work without one
    if result.returncode == 2 and dvfslab_words[:1] == ["run-workload"] and \
            "run-workload is not in this build" in error and "cmake" in error:
        return None  # left out of a build without LibTorch, and says how to build it
    return f"exit {result.returncode}"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    binary, repo, python, module_dir = (Path(a).resolve() for a in sys.argv[1:])
    lines = quick_start_lines(repo / "README.md")
    failures = []
    with tempfile.TemporaryDirectory(prefix="quickstart-") as folder:
        work = Path(folder)
        for name in ("data", "docs", "examples"):
            os.symlink(repo / name, work / name)
        (work / "build/release").mkdir(parents=True)
        os.symlink(module_dir, work / "build/release/python")
        bin_dir = work / ".bin"
        bin_dir.mkdir()
        os.symlink(python, bin_dir / "python3")
        linked = subprocess.run(["bash", str(repo / "scripts/link-on-path.sh"), str(binary)],
                                env=dict(os.environ, DVFSLAB_BIN_DIR=str(bin_dir)),
                                capture_output=True, text=True)
        if linked.returncode != 0 or not (bin_dir / "dvfslab").exists():
            sys.exit(f"scripts/link-on-path.sh did not put dvfslab on PATH:\n{linked.stdout}{linked.stderr}")
        environment = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                           DVFSLAB_STATE_DIR=str(work / ".state"),
                           # No NVIDIA driver, whatever this machine has.
                           DVFSLAB_NVML_LIBRARY=str(work / "no-libnvidia-ml.so.1"))
        environment.pop("PYTHONPATH", None)
        environment.pop("DVFSLAB_READ_ONLY", None)
        has_run_workload = "run-workload" in subprocess.run([str(binary), "--help"], capture_output=True,
                                                            text=True).stdout
        for line in lines:
            command = shrink_run_workload(line) if has_run_workload and "run-workload" in line else line
            result = subprocess.run(["bash", "-c", command], cwd=work, env=environment, capture_output=True,
                                    text=True, timeout=LINE_TIMEOUT_S)
            problem = check_line(command, result, work)
            print(f"{'FAIL' if problem else 'ok  '} [exit {result.returncode}] {command}")
            if problem:
                failures.append(f"{line}\n  {problem}; stderr:\n    " +
                                "\n    ".join(result.stderr.splitlines()[-10:]))
    for failure in failures:
        print(f"\nQuick start line failed: {failure}")
    print(f"\nquickstart: {len(lines)} lines, {len(failures)} failed")
    return 1 if failures or not lines else 0


if __name__ == "__main__":
    sys.exit(main())
