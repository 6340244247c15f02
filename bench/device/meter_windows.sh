#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# Short windows and the steady window on a real GPU (issue 13), read-only:
#  1. twenty 1 s named windows of a steady load, then one 20 s window of the same
#     load, for a bf16 GEMM (8192², at the default power limit, which caps it) and a
#     device-to-device copy: the 1 s windows' energy per second relative to the 20 s
#     window's (mean, sd, range, all in %);
#  2. the GEMM with 'dvfslab:iter 20 items 20' markers and 3 s of tear-down after
#     the loop with the marker descriptor open: energy per iteration of the steady
#     window against the named window 'load'.
# Usage: meter_windows.sh PATH/TO/dvfslab [DEVICE]   (results in $OUT, default a new
# temporary directory). LOADS="gemm copy" picks the loads, WARMUP_SECONDS (60: the copy's power follows the board's temperature for tens of seconds) their
# warm-up, TAIL=0 skips step 2. Never changes a GPU setting.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
dvfslab="${1:?usage: meter_windows.sh PATH/TO/dvfslab [DEVICE]}"
device="${2:-0}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
export CUDA_DEVICE_ORDER=PCI_BUS_ID
[[ -x "$dvfslab" ]] || { echo "meter_windows: $dvfslab is not an executable" >&2; exit 1; }

for load in ${LOADS:-gemm copy}; do
  echo "meter_windows: $load: 20 x 1 s windows, then one 20 s window" >&2
  "$dvfslab" measure --device "$device" --json -- \
    python3 "$here/meter_windows.py" --mode windows --load "$load" \
      --warmup-seconds "${WARMUP_SECONDS:-60}" > "$out/windows_$load.json"
done
if [[ "${TAIL:-1}" == 1 ]]; then
echo "meter_windows: gemm with tear-down after the loop" >&2
# --skip-iters 20: the steady window opens at the loop's first marker, past the
# unmarked start-up and warm-up, as the named window does.
"$dvfslab" measure --device "$device" --json --skip-iters 20 -- \
  python3 "$here/meter_windows.py" --mode tail --load gemm > "$out/tail_gemm.json"
fi

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, statistics, sys

out = sys.argv[1]
for load in ("gemm", "copy"):
    if not os.path.exists(os.path.join(out, f"windows_{load}.json")):
        continue
    doc = json.load(open(os.path.join(out, f"windows_{load}.json")))
    windows = {w["name"]: w for w in doc["windows"]}
    long = windows["w20s"]
    reference = long["energy_j"] / long["duration_s"]
    relative = [100.0 * (w["energy_j"] / w["duration_s"] / reference - 1.0)
                for name, w in sorted(windows.items()) if name.startswith("w1s_")]
    errors = [100.0 * w.get("energy_error_j", float("nan")) / w["energy_j"]
              for name, w in windows.items() if name.startswith("w1s_")]
    print(f"{load}: 20 s window {reference:.1f} W ({long.get('energy_error_j', float('nan')):.2f} J error estimate); "
          f"1 s windows vs it: mean {statistics.mean(relative):+.3f} %, sd {statistics.stdev(relative):.3f} %, "
          f"range {max(relative) - min(relative):.3f} % (min {min(relative):+.3f}, max {max(relative):+.3f}); "
          f"mean error estimate {statistics.mean(errors):.3f} %")
if not os.path.exists(os.path.join(out, "tail_gemm.json")):
    sys.exit(0)
doc = json.load(open(os.path.join(out, "tail_gemm.json")))
load = next(w for w in doc["windows"] if w["name"] == "load")
steady = doc["steady"]
per_iteration = lambda w: w["energy_j"] / w["iterations"]
print(f"tail: steady {steady['iterations']} iterations, {steady['duration_s']:.3f} s, "
      f"{per_iteration(steady):.4f} J/iteration; named window 'load' {load['iterations']} iterations, "
      f"{load['duration_s']:.3f} s, {per_iteration(load):.4f} J/iteration; difference "
      f"{100.0 * (per_iteration(steady) / per_iteration(load) - 1.0):+.2f} %; "
      f"after the loop {doc.get('tail_s', float('nan')):.3f} s, {doc.get('tail_energy_j', float('nan')):.1f} J")
PY
echo "meter_windows: results in $out" >&2
