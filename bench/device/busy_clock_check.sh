#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# Checks on a real GPU what the meter reports as its busy share and its clocks while
# busy (docs/measure.md): `dvfslab measure` of a steady load and of one that is idle
# half the time (bursty_load.py), at whatever settings the GPU has. Where the GPU
# lowers its clocks while idle, the mean clock of the bursty window falls and the
# mean while busy does not; that difference is what keeps a sweep from flagging a
# window whose load paused (docs/plans.md, "a setting not applied").
# Results (each run's JSON and summary.json) go to $OUT (default: a new temporary
# directory). Read-only: no GPU setting is changed.
# Environment: DVFSLAB (binary, default build/device/src/dvfslab), SECONDS_PER_RUN
# (24), DEVICE (dvfslab --device, default 0).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dvfslab="${DVFSLAB:-$root/build/device/src/dvfslab}"
seconds="${SECONDS_PER_RUN:-24}"
device="${DEVICE:-0}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
export CUDA_DEVICE_ORDER=PCI_BUS_ID
[[ -x "$dvfslab" ]] || { echo "busy_clock_check: $dvfslab not found: build it first" >&2; exit 1; }

for pattern in "steady 0" "bursty 2"; do
  set -- $pattern
  echo "busy_clock_check: $1 load" >&2
  "$dvfslab" measure --device "$device" --json -- \
    python3 "$here/bursty_load.py" --seconds "$seconds" --busy 2 --idle "$2" > "$out/$1.json"
done

python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
keys = ("duration_s", "busy_fraction", "sm_mhz_mean", "sm_mhz_busy_mean", "sm_mhz_min", "mem_mhz_mean",
        "mem_mhz_busy_mean", "mean_power_w", "flags")
summary = {}
for name in ("steady", "bursty"):
    measure = json.load(open(os.path.join(out, f"{name}.json")))
    window = next(w for w in measure["windows"] if w["name"] == "steady")
    summary[name] = {key: window.get(key) for key in keys}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
print(json.dumps(summary, indent=2))
PY
