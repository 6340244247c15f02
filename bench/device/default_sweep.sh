#!/usr/bin/env bash
export DVFSLAB_READ_ONLY=1
# Measures every built-in workload at the GPU's default setting, read-only (no clock
# or power limit is changed: DVFSLAB_READ_ONLY refuses every control call), and
# exports the small database. Run on the GPU machine from the repository root:
#   OUT=/some/dir bash bench/device/default_sweep.sh
# Writes into $OUT (default out/default_sweep): default_sweep.sqlite, sweep-table.csv,
# measurements.json, analysis.json, info.json and sweep.log (the progress lines).
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=prepare.sh
source "$repo_root/bench/device/prepare.sh"   # builds build/device, sets $DVFSLAB
set -euo pipefail
out=${OUT:-$repo_root/out/default_sweep}
mkdir -p "$out"
db="$out/default_sweep.sqlite"
rm -f "$db" "$db-wal" "$db-shm"

"$DVFSLAB" info --device 0 --json > "$out/info.json"
started=$(date +%s)
"$DVFSLAB" sweep "$repo_root/bench/device/default_sweep.toml" --device 0 --db "$db" 2> "$out/sweep.log"
echo "sweep took $(( $(date +%s) - started )) s" >> "$out/sweep.log"
"$DVFSLAB" export "$db" --format sweep-table > "$out/sweep-table.csv"
"$DVFSLAB" export "$db" --format json > "$out/measurements.json"
"$DVFSLAB" analyze "$db" --json > "$out/analysis.json"
cat "$out/sweep.log"
