#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# Energy per token of the llama decoder's two generation phases on a real GPU at the
# settings found (read-only): `dvfslab measure` around `run-workload llama --mode
# generate`, whose markers make prefill and decode windows of their own. For each
# preset it records the measure JSON and the workload's own JSON, and summarises
# J/token and tokens/s per phase, and how the marked windows' lengths compare with
# the phases' own timing (summary.json).
# Environment: DVFSLAB (binary, default build/device/src/dvfslab), PRESETS ("125m 1b"),
# BATCH (32), PROMPT_LEN (1024), GEN_LEN (64), ITERS (30), PRECISION (bf16).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dvfslab="${DVFSLAB:-$root/build/device/src/dvfslab}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
[[ -x "$dvfslab" ]] || { echo "llama_phases: $dvfslab not found: build it first (bench/device/prepare.sh)" >&2; exit 1; }

for preset in ${PRESETS:-125m 1b}; do
  echo "llama_phases: $preset" >&2
  # The workload's JSON goes to a file of its own; measure's alone is on stdout.
  workload=("$dvfslab" run-workload llama --preset "$preset" --mode generate --precision "${PRECISION:-bf16}"
    --batch "${BATCH:-32}" --prompt-len "${PROMPT_LEN:-1024}" --gen-len "${GEN_LEN:-64}"
    --iters "${ITERS:-30}" --warmup 2 --json)
  "$dvfslab" measure --device "${DEVICE:-0}" --json -- /bin/sh -c '"$@" > "$0"' \
    "$out/workload-$preset.json" "${workload[@]}" \
    > "$out/measure-$preset.json" 2> "$out/measure-$preset.err" || echo "llama_phases: $preset exited $?" >&2
done

python3 - "$out" ${PRESETS:-125m 1b} <<'PY'
import json, os, sys

out, presets = sys.argv[1], sys.argv[2:]
rows = []
for preset in presets:
    try:
        measure = json.load(open(os.path.join(out, f"measure-{preset}.json")))
        workload = json.load(open(os.path.join(out, f"workload-{preset}.json")))
    except (OSError, ValueError) as error:
        rows.append({"preset": preset, "error": str(error)})
        continue
    windows = {w["name"]: w for w in measure.get("windows", [])}
    for phase in ("prefill", "decode"):
        own, window = workload[phase], windows.get(phase, {})
        energy = window.get("energy_j")
        rows.append({
            "preset": preset, "phase": phase, "tokens": own["tokens"],
            "tokens_per_s": own["tokens_per_s"], "own_seconds": own["seconds"],
            "window_seconds": window.get("duration_s"),
            "timing_difference_pct": 100.0 * (window["duration_s"] - own["seconds"]) / own["seconds"] if window else None,
            "energy_j": energy, "mean_power_w": window.get("mean_power_w"),
            "j_per_token": energy / own["tokens"] if energy else None,
            "flags": window.get("flags"),
        })
json.dump(rows, open(os.path.join(out, "summary.json"), "w"), indent=2)
print(json.dumps(rows, indent=2))
PY
