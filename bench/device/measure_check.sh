#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# Checks `dvfslab measure` on a real GPU against steady_load.py's own reading of
# NVML's energy counter, and checks that measuring does not slow the load:
#   energy:     measure's "steady" window vs the script's own, same window (target <= 1 %)
#   throughput: the load alone vs under measure, medians of RUNS each (target <= 0.5 %),
#               runs interleaved; one more round when the first misses the target
# Results (every run's JSON and summary.json) go to $OUT (default: a new temporary
# directory). Never changes a GPU setting: read-only NVML calls and DVFSLAB_READ_ONLY=1.
# Environment: DVFSLAB (binary, default build/device/src/dvfslab), RUNS (3),
# SECONDS_PER_RUN (30), DEVICE (dvfslab --device, default 0).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dvfslab="${DVFSLAB:-$root/build/device/src/dvfslab}"
runs="${RUNS:-3}"
seconds="${SECONDS_PER_RUN:-30}"
device="${DEVICE:-0}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
# CUDA device 0 and NVML device 0 are then the same GPU.
export CUDA_DEVICE_ORDER=PCI_BUS_ID

[[ -x "$dvfslab" ]] || { echo "measure_check: $dvfslab not found: build it first (cmake --preset release -B build/device)" >&2; exit 1; }

run_round() {
  local round=$1
  for ((i = 1; i <= runs; i++)); do
    echo "measure_check: round $round run $i/$runs: load alone" >&2
    python3 "$here/steady_load.py" --seconds "$seconds" --out "$out/alone_${round}_$i.json"
    echo "measure_check: round $round run $i/$runs: load under dvfslab measure" >&2
    "$dvfslab" measure --device "$device" --json -- \
      python3 "$here/steady_load.py" --seconds "$seconds" --out "$out/measured_load_${round}_$i.json" \
      > "$out/measure_${round}_$i.json"
  done
}

summarise() {
  python3 - "$out" "$@" <<'PY'
import glob, json, os, statistics, sys

out = sys.argv[1]
def load(pattern):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, pattern)))]

alone = load("alone_*.json")
loads = load("measured_load_*.json")
measures = load("measure_*.json")
energy_rows = []
for load_result, measure in zip(loads, measures):
    window = next(w for w in measure["windows"] if w["name"] == "steady")
    energy_rows.append({
        "script_energy_j": load_result["energy_j"],
        "measure_energy_j": window["energy_j"],
        "difference_pct": 100.0 * (window["energy_j"] - load_result["energy_j"]) / load_result["energy_j"],
        "measure_integrated_difference_pct": window.get("energy_difference_pct"),
        "script_seconds": load_result["seconds"],
        "measure_seconds": window["duration_s"],
        "measure_flags": window["flags"],
        "sample_period_s": measure["sample_period_s"],
        "sensor_period_s": measure["sensor_period_s"],
    })
alone_rate = statistics.median(r["matmuls_per_s"] for r in alone)
measured_rate = statistics.median(r["matmuls_per_s"] for r in loads)
throughput_pct = 100.0 * (measured_rate - alone_rate) / alone_rate
worst_energy = max(abs(r["difference_pct"]) for r in energy_rows)
summary = {
    "device": alone[0]["device"],
    "runs_each": len(alone),
    "seconds_per_run": alone[0]["seconds"],
    "energy": energy_rows,
    "energy_difference_pct_worst": worst_energy,
    "energy_target_met": worst_energy <= 1.0,
    "throughput_alone_matmuls_per_s": [r["matmuls_per_s"] for r in alone],
    "throughput_measured_matmuls_per_s": [r["matmuls_per_s"] for r in loads],
    "throughput_difference_pct_of_medians": throughput_pct,
    "throughput_target_met": abs(throughput_pct) <= 0.5,
    "tflops_alone_median": statistics.median(r["tflops"] for r in alone),
    "mean_power_w_alone_median": statistics.median(r["mean_power_w"] for r in alone),
}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
for i, r in enumerate(energy_rows, 1):
    print(f"run {i}: measure {r['measure_energy_j']:.1f} J vs script {r['script_energy_j']:.1f} J "
          f"({r['difference_pct']:+.3f} %), integrated vs counter {r['measure_integrated_difference_pct']}")
print(f"energy: worst difference {worst_energy:.3f} % (target <= 1 %): "
      f"{'met' if summary['energy_target_met'] else 'MISSED'}")
print(f"throughput: alone {alone_rate:.2f} matmuls/s, under measure {measured_rate:.2f} matmuls/s, "
      f"{throughput_pct:+.3f} % (target <= 0.5 %): {'met' if summary['throughput_target_met'] else 'MISSED'}")
print(f"results in {out}")
sys.exit(0 if summary["throughput_target_met"] else 3)
PY
}

run_round 1
if ! summarise; then
  echo "measure_check: throughput target missed; one more round for the noise" >&2
  run_round 2
  summarise || true
fi
