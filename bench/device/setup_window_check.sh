#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# Checks `dvfslab measure`'s default steady window on a real GPU with a job that has
# set-up before its loop (issue 26, H5): setup_then_train.py (BERT-base training,
# ~20 s of set-up) reads NVML's energy counter itself over the iterations after its
# first marker; dvfslab's default figures must match it (time per iteration and
# energy per item within 1 %) and report the set-up beside them. Results
# (measure.json, own.json, summary.txt) go to $OUT (default: a new temporary
# directory). Arguments go to setup_then_train.py. Never changes a GPU setting:
# read-only NVML calls and DVFSLAB_READ_ONLY=1.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
# CUDA device 0 and NVML device 0 are then the same GPU.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
source "$here/prepare.sh"
set -euo pipefail

"$DVFSLAB" measure --device 0 --json -- python3 "$here/setup_then_train.py" --out "$out/own.json" "$@" \
  > "$out/measure.json"
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
measured = json.load(open(os.path.join(out, "measure.json")))
own = json.load(open(os.path.join(out, "own.json")))
print(f"job's own window: {own['iterations_after_first_marker']} iterations, "
      f"{own['time_per_iteration_s']:.5f} s/iteration, {own['energy_per_item_j']:.4f} J/item "
      f"(set-up and first step {own['setup_and_first_step_s']:.1f} s)")
print(f"dvfslab measure:  {measured['iterations']} iterations, "
      f"{measured['time_per_iteration_s']:.5f} s/iteration, {measured['energy_per_item_j']:.4f} J/item "
      f"(setup_s {measured.get('setup_s')}, setup_energy_j {measured.get('setup_energy_j')})")
for key in ("time_per_iteration_s", "energy_per_item_j"):
    print(f"{key}: dvfslab / job = {measured[key] / own[key]:.4f}")
PY
