#!/usr/bin/env bash
# Builds dvfslab with its tests and runs them all, twice: the release build with
# LibTorch and the Python module (its pytest suite too), and the `asan` preset
# (AddressSanitizer + UBSan, no LibTorch, no Python module) over the unit and
# integration tests. Both treat compiler warnings as errors. Safe
# to run again.
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
bash scripts/install-deps.sh --tests
# The hostile-input suite (dvfslab_hostile_tests, label `hostile`) runs in both test
# runs; a preset or filter that loses it fails here rather than passing without it.
require_hostile_suite() {
  if ! ctest --preset "$1" -N -L hostile | grep -q 'Total Tests: [1-9]'; then
    echo "test.sh: the $1 tests hold no hostile-input tests (label hostile)" >&2
    exit 1
  fi
}
jobs=$(nproc)
# A compiler cache makes a second run quick, also from another clone of the
# repository: paths inside it are hashed relative to its root, and the build
# folder's own path is left out of the hash.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$repo_root" CCACHE_NOHASHDIR=1
fi
# The Python module and its suite are for Debian's interpreter, which has the
# python3-* packages, whatever `python3` a PATH (pyenv, a venv) puts first.
python=()
if [[ -x /usr/bin/python3 ]]; then python=(-DPython3_EXECUTABLE=/usr/bin/python3); fi
cmake --preset release -DCMAKE_BUILD_TYPE=Release -DDVFSLAB_BUILD_TESTS=ON -DDVFSLAB_BUILD_BENCH=ON -DDVFSLAB_WITH_TORCH=ON \
  -DDVFSLAB_WITH_PYTHON=ON -DDVFSLAB_WERROR=ON "${python[@]}" "${launcher[@]}" >/dev/null
cmake --build --preset release -j "$jobs"
require_hostile_suite release
ctest --preset release -j "$jobs"

cmake --preset asan "${python[@]}" "${launcher[@]}" >/dev/null
cmake --build --preset asan -j "$jobs"
require_hostile_suite asan
ctest --preset asan -j "$jobs"
