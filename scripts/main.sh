#!/usr/bin/env bash
# Builds dvfslab and runs the main job: the e-Energy'19 DVFS study on this machine's
# NVIDIA GPU, or on a simulated V100 when there is none. Also builds the Python
# module and puts `dvfslab` on PATH, so the README's Quick start runs next. Safe to
# run again.
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
bash scripts/install-deps.sh
# The Python module is for Debian's interpreter, which has the python3-* packages,
# whatever `python3` a PATH (pyenv, a venv) puts first. LibTorch stays AUTO: found,
# run-workload is built; not found (the default here: Debian's is CPU-only and slow
# to build against), `dvfslab run-workload` says how to get it.
python=()
if [[ -x /usr/bin/python3 ]]; then python=(-DPython3_EXECUTABLE=/usr/bin/python3); fi
cmake --preset release -DCMAKE_BUILD_TYPE=Release -DDVFSLAB_BUILD_TESTS=OFF -DDVFSLAB_BUILD_BENCH=OFF \
  -DDVFSLAB_WITH_PYTHON=ON "${python[@]}" >/dev/null
cmake --build --preset release --target dvfslab dvfslab_python
bash scripts/link-on-path.sh build/release/src/dvfslab
exec build/release/src/dvfslab study --out "${DVFSLAB_OUT:-out/study}" "$@"
