#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# Checks the paths of jobs on several GPUs against a real node, read-only:
#   devices:  `info --device all` opens every GPU nvidia-smi lists; CUDA_VISIBLE_DEVICES
#             given as each GPU's UUID, a UUID prefix and a CUDA index opens that GPU
#   measure:  `measure --device all` of a GEMM load on GPU 0: per-GPU objects (`gpus`)
#             only with more than one GPU, their energies adding up to the total, and
#             no warning about unmetered GPUs (NVML's process list names the load)
#   ranks:    a two-rank job started by torchrun writes rank markers; rank 0's and the
#             slowest rank's iteration counts match what the ranks counted themselves
#   settings: nvidia-smi's clocks, application clocks and power limit are the same
#             before and after
# Results go to $OUT (default: a new temporary directory), with summary.json.
# Environment: DVFSLAB (binary, default build/device/src/dvfslab), SECONDS_PER_RUN (10).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dvfslab="${DVFSLAB:-$root/build/device/src/dvfslab}"
seconds="${SECONDS_PER_RUN:-10}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
export CUDA_DEVICE_ORDER=PCI_BUS_ID
[[ -x "$dvfslab" ]] || { echo "node_checks: $dvfslab not found: build it first (bench/device/prepare.sh)" >&2; exit 1; }

settings_query=index,uuid,clocks.applications.graphics,clocks.applications.memory,power.limit,persistence_mode,clocks.max.graphics
nvidia-smi --query-gpu=$settings_query --format=csv,noheader > "$out/settings-before.csv"
nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader > "$out/nvidia-smi-gpus.csv"

echo "node_checks: devices" >&2
"$dvfslab" info --device all --json > "$out/info-all.json"
while IFS=', ' read -r index uuid bus; do
  CUDA_VISIBLE_DEVICES="$uuid" "$dvfslab" info --json > "$out/info-visible-uuid-$index.json"
  CUDA_VISIBLE_DEVICES="${uuid:0:12}" "$dvfslab" info --json > "$out/info-visible-prefix-$index.json"
  CUDA_VISIBLE_DEVICES="$index" "$dvfslab" info --json > "$out/info-visible-index-$index.json"
done < "$out/nvidia-smi-gpus.csv"

echo "node_checks: measure --device all" >&2
"$dvfslab" measure --device all --json -- \
  python3 "$here/steady_load.py" --seconds "$seconds" --warmup-seconds 3 --out "$out/load.json" \
  > "$out/measure-all.json" 2> "$out/measure-all.err"

echo "node_checks: ranks" >&2
for source in rank0 slowest; do
  # A failed run is reported in summary.json, not fatal: the other checks still run.
  "$dvfslab" measure --device all --json --iterations-from "$source" -- \
    python3 -m torch.distributed.run --standalone --nproc_per_node 2 "$here/rank_load.py" --seconds "$seconds" \
    > "$out/ranks-$source.json" 2> "$out/ranks-$source.err" || echo "node_checks: ranks ($source) exited $?" >&2
done

nvidia-smi --query-gpu=$settings_query --format=csv,noheader > "$out/settings-after.csv"

python3 - "$out" <<'PY'
import json, os, re, sys

out = sys.argv[1]
def load(name):
    """The JSON a step wrote, or {} for a step that failed (its check then fails)."""
    try:
        return json.load(open(os.path.join(out, name)))
    except (OSError, ValueError):
        return {}
gpus = [line.split(", ") for line in open(os.path.join(out, "nvidia-smi-gpus.csv")) if line.strip()]
checks = {}
info_all = load("info-all.json").get("devices", [])
checks["info_all_opens_every_gpu"] = [d["uuid"] for d in info_all] == [g[1] for g in gpus]
for index, uuid, _ in gpus:
    for form in ("uuid", "prefix", "index"):
        devices = load(f"info-visible-{form}-{index}.json").get("devices", [])
        checks[f"visible_{form}_{index}_opens_that_gpu"] = [d["uuid"] for d in devices] == [uuid]
measure = load("measure-all.json")
err = open(os.path.join(out, "measure-all.err")).read()
if len(gpus) > 1:
    per_gpu = sum(g["energy_j"] for g in measure.get("gpus", []))
    total = measure.get("energy_j", 0.0)
    checks["gpus_add_up_to_total"] = total > 0 and abs(per_gpu - total) <= 1e-6 * total
else:
    checks["one_gpu_json_has_no_gpus_array"] = "energy_j" in measure and "gpus" not in measure
checks["no_unmetered_gpu_warning"] = "also used" not in err
counted = {}
for source in ("rank0", "slowest"):
    text = open(os.path.join(out, f"ranks-{source}.err")).read()
    ranks = [json.loads(line) for line in re.findall(r'^\{"rank".*\}$', text, re.M)]
    counted = {r["rank"]: r["iterations"] for r in ranks}
    reported = load(f"ranks-{source}.json").get("iterations")
    # The first iteration marker opens the steady window: its iteration is not in the count.
    finished = counted.get(0) if source == "rank0" else min(counted.values(), default=None)
    expected = finished - 1 if finished else None
    checks[f"iterations_from_{source}"] = {"reported": reported, "ranks_counted": counted,
                                          "ok": len(counted) == 2 and reported == expected}
before = open(os.path.join(out, "settings-before.csv")).read()
after = open(os.path.join(out, "settings-after.csv")).read()
checks["settings_unchanged"] = before == after
ok = all(v if isinstance(v, bool) else v["ok"] for v in checks.values())
summary = {"gpus": len(gpus), "measure_energy_j": measure.get("energy_j"), "measure_duration_s": measure.get("duration_s"),
           "checks": checks, "all_passed": ok}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
print(json.dumps(summary, indent=2))
sys.exit(0 if ok else 1)
PY
