#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# Checks `dvfslab info` against nvidia-smi on a real GPU. Read-only: dvfslab runs
# with DVFSLAB_READ_ONLY=1 and nvidia-smi is only queried, never told to change a
# setting. Builds dvfslab first unless build/device/src/dvfslab exists (see
# prepare.sh). Writes into "$OUT" (default docs/results/h200):
#   dvfslab-info.json    dvfslab info --json
#   dvfslab-info.txt     dvfslab info
#   nvidia-smi-q.txt     nvidia-smi -q -d CLOCK,POWER,SUPPORTED_CLOCKS
#   nvidia-smi-gpus.csv  nvidia-smi --query-gpu=... (name, UUID, PCI bus id, live readings)
#   compare.txt          bench/device/compare_info.py: agreement, one line per check
# Exit status: 0 when every check agrees, 1 otherwise.
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-$repo_root/docs/results/h200}
mkdir -p "$out"

set +u
# shellcheck source=bench/device/prepare.sh
source "$repo_root/bench/device/prepare.sh"
set -euo pipefail

"$DVFSLAB" info --json > "$out/dvfslab-info.json"
"$DVFSLAB" info > "$out/dvfslab-info.txt"
nvidia-smi -q -d CLOCK,POWER,SUPPORTED_CLOCKS > "$out/nvidia-smi-q.txt"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,power.draw,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv,noheader,nounits > "$out/nvidia-smi-gpus.csv"
python3 "$repo_root/bench/device/compare_info.py" "$out/dvfslab-info.json" "$out/nvidia-smi-q.txt" \
  "$out/nvidia-smi-gpus.csv" | tee "$out/compare.txt"
