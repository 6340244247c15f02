#!/usr/bin/env bash
# Scale benchmark of the store and the report (issue 11 item 16): writes a sweep table
# of ROWS rows (default 1,000,000; deterministic), then times the real binary on it:
# import, export csv, export json and report. Prints seconds, peak RSS and output size
# of each (GNU time). Results: docs/results/store_scale.md.
#
#   bench/store_scale.sh BUILD_DIR [ROWS] [WORK_DIR]
#
# The table has 4 GPUs × ROWS/4,000 workloads × 100 settings (20 core × 5 memory
# clocks) × 10 rows per setting, so a million rows are 1,000 cases and 100,000
# settings. WORK_DIR (default: a new temporary directory, removed at the end) holds
# the table, database and outputs, about 1 GB for a million rows.
set -euo pipefail

build=${1:?usage: bench/store_scale.sh BUILD_DIR [ROWS] [WORK_DIR]}
rows=${2:-1000000}
dvfslab=$build/src/dvfslab
[[ -x $dvfslab ]] || { echo "store_scale.sh: no binary at $dvfslab: build the dvfslab target first" >&2; exit 2; }
if [[ -n ${3:-} ]]; then
  work=$3
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

table=$work/table.csv
database=$work/scale.sqlite
awk -v rows="$rows" 'BEGIN {
  print "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default"
  gpu[0] = "NVIDIA H200"; gpu[1] = "Tesla V100-SXM2-32GB"; gpu[2] = "NVIDIA A100-SXM4-80GB"; gpu[3] = "Tesla P100-PCIE-16GB"
  n = 0
  for (c = 0; n < rows; ++c)
    for (s = 0; s < 20 && n < rows; ++s)
      for (m = 0; m < 5 && n < rows; ++m)
        for (r = 0; r < 10 && n < rows; ++r) {
          core = 500 + 50 * s; mem = 800 + 100 * m
          time = 0.01 * (0.3 + 0.5 * 1500 / core + 0.2 * 1200 / mem) * (1 + 0.001 * ((c * 7 + r * 13 + s) % 10))
          power = (60 + 0.05 * mem + 1.5e-8 * core * core * core) * (1 + 0.001 * ((c * 3 + r * 11 + m) % 10))
          printf "synthetic,%s,workload-%d,%d,%d,,%.6g,%.6g,%d\n", gpu[c % 4], int(c / 4), core, mem, time, power, (s == 19 && m == 4)
          ++n
        }
}' > "$table"
rm -f "$database" "$database-wal" "$database-shm"

echo "store_scale: $rows rows ($(stat -c %s "$table" | awk '{printf "%.1f MB", $1 / 1e6}') sweep table), $(nproc) cores, $dvfslab"
# Wall seconds are what the targets count; CPU seconds (user + system) show the cost
# apart from other load on the machine.
printf '%-12s %9s %9s %14s %12s\n' step "wall (s)" "CPU (s)" "peak RSS (MB)" "output (MB)"
measure() {  # measure STEP OUTPUT COMMAND...
  local step=$1 output=$2
  shift 2
  /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "$@" 2> "$work/$step.log" ||
    { echo "store_scale.sh: $step failed:" >&2; cat "$work/$step.log" >&2; exit 1; }
  read -r seconds user system kilobytes < <(tail -n 1 "$work/time.txt")
  printf '%-12s %9.2f %9.2f %14.0f %12.1f\n' "$step" "$seconds" "$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')" "$((kilobytes / 1024))" \
    "$(stat -c %s "$output" | awk '{print $1 / 1e6}')"
}
measure import "$database" "$dvfslab" import "$table" --db "$database"
measure export-csv "$work/export.csv" "$dvfslab" export "$database" --format csv -o "$work/export.csv"
measure export-json "$work/export.json" "$dvfslab" export "$database" --format json -o "$work/export.json"
measure report "$work/report.html" "$dvfslab" report "$database" -o "$work/report.html"
