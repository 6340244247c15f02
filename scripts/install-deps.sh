#!/usr/bin/env bash
# Installs what building dvfslab needs on Debian 12; safe to run again (installs
# only what is missing). Usage: install-deps.sh [--tests]
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config git
          libcli11-dev nlohmann-json3-dev libtoml11-dev libsqlite3-dev libeigen3-dev libfmt-dev
          prometheus-cpp-dev  # `dvfslab exporter`: the exposition format
          libcpp-httplib-dev  # `dvfslab exporter`: its HTTP server (its tests scrape it with it too)
          python3 python3-dev pybind11-dev
          nodejs npm
          librsvg2-bin fonts-dejavu-core  # `report --figures`: rsvg-convert makes the PDFs, in DejaVu Sans
          python3-torch  # the README Quick start's Python example trains a small PyTorch model
          # LibTorch and NumPy call BLAS through libblas.so.3, which is otherwise the
          # reference implementation (GPT-2 small's CPU training step: 22 s with it, 7.5-9.6 s
          # with OpenBLAS, on 2 busy cores).
          libopenblas0-pthread)
# The Python suite: pytest, and what the examples use (PyTorch on the CPU, pandas, matplotlib).
if [[ "${1:-}" == "--tests" ]]; then
  packages+=(libgtest-dev libgmock-dev libbenchmark-dev libtorch-dev chromium slurm-wlm munge ccache
             python3-pytest python3-pandas python3-matplotlib python3-numpy
             poppler-utils  # pdffonts: the figure test checks that the PDFs embed their fonts
             librocm-smi-dev  # AMD's header checks the ROCm SMI declarations; its library, that `info` says "no AMD GPU"
             prometheus)  # a real Prometheus scrapes the exporter
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
# A node/npm installed outside Debian (e.g. from nodesource) is fine too.
if command -v npm >/dev/null && command -v node >/dev/null; then
  missing=("${missing[@]/#nodejs}"); missing=("${missing[@]/#npm}")
fi
read -r -a missing <<<"${missing[*]}"
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The HTML report embeds Vega-Lite from npm (versions pinned in package-lock.json).
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -f "$repo_root/web/package.json" ]]; then
  if [[ ! -d "$repo_root/web/node_modules" ]] || [[ "$repo_root/web/package-lock.json" -nt "$repo_root/web/node_modules" ]]; then
    (cd "$repo_root/web" && npm ci --no-audit --no-fund --loglevel=error && touch node_modules)
  fi
fi
