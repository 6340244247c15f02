#!/usr/bin/env bash
# Builds dvfslab and runs the main job: the e-Energy'19 DVFS study on this machine's
# NVIDIA GPU, or on a simulated V100 when there is none. Safe to run again.
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
bash scripts/install-deps.sh
cmake --preset release -DCMAKE_BUILD_TYPE=Release -DDVFSLAB_BUILD_TESTS=OFF -DDVFSLAB_BUILD_BENCH=OFF >/dev/null
cmake --build --preset release --target dvfslab
exec build/release/src/dvfslab study --out "${DVFSLAB_OUT:-out/study}" "$@"
