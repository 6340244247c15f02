#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# The Python module's check on a real GPU (issue 17), read-only: builds
# build/device with the Python module against the pybind11 headers inside the
# machine's PyTorch (no pybind11-dev, no pip), then runs python_meter.py: a Meter
# window around a steady bf16 GEMM load against a direct NVML energy read (<= 1 %),
# and the load's throughput with and without per-step metering (<= 0.5 %).
# Results (python_meter.json, python_meter.csv, python_meter.txt) go to $OUT
# (default: a new temporary directory). Arguments go to python_meter.py
# (e.g. --seconds 30 --runs 3 --matmuls-per-step 50). Never changes a GPU setting:
# dvfslab opens GPUs read-only from Python, and the direct reads are NVML getters.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
# CUDA device 0 and NVML device 0 are then the same GPU.
export CUDA_DEVICE_ORDER=PCI_BUS_ID

# Debian -dev packages from .devdeps/ and the dvfslab binary in build/device.
source "$here/prepare.sh"
set -euo pipefail
python=$(command -v python3)
torch_include=$("$python" -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "include"))')
python_args=(-DDVFSLAB_WITH_PYTHON=ON -DDVFSLAB_PYBIND11_INCLUDE_DIR="$torch_include" -DPython3_EXECUTABLE="$python")
# A Python without its own headers (no python3-dev) can take them from .devdeps
# (python3.X-dev and libpython3.X-dev of the same version, unpacked by prepare.sh).
headers=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
if [[ ! -f "$headers/Python.h" && -f "$prefix/usr/include/python$version/Python.h" ]]; then
  python_args+=(-DPython3_INCLUDE_DIR="$prefix/usr/include/python$version")
fi
cmake -S "$root" -B "$root/build/device" "${python_args[@]}" >"$out/configure.log"
cmake --build "$root/build/device" -j "$(nproc)" --target dvfslab_python

PYTHONPATH="$root/build/device/python${PYTHONPATH:+:$PYTHONPATH}" \
  "$python" "$here/python_meter.py" --out "$out" "$@" | tee "$out/python_meter.txt"
echo "python_meter: results in $out" >&2
