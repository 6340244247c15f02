#!/usr/bin/env bash
# Remakes the report figures shown in docs/report.md from the Quick start's sweep
# (docs/plan-example.toml on the simulated A100), in the paper style:
#   bash docs/images/report/make.sh [DVFSLAB]      (default: dvfslab on PATH)
# Needs rsvg-convert (Debian librsvg2-bin, installed by scripts/install-deps.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../../.." && pwd)
dvfslab=${1:-dvfslab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Progress goes to a log, shown only when a step fails.
run() { "$@" > "$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }; }
run "$dvfslab" sweep "$repo_root/docs/plan-example.toml" --device sim:a100 --db "$work/a100.sqlite"
run "$dvfslab" report "$work/a100.sqlite" --figures "$work/figures" --style paper
# One figure of each new kind: the summary, a network's energy relative to its
# default, and the Pareto fronts of every case.
for kind in energy-saving-and-slowdown energy-per-item-relative-to-the-default pareto-fronts-of-every-case; do
  figure=$(find "$work/figures" -name "*-simulated-$kind-*.svg" | sort | head -n 1)
  [[ -n $figure ]] || { echo "make.sh: no $kind figure in the report" >&2; exit 1; }
  rsvg-convert -f png -z 2 "$figure" -o "$here/$kind.png"
done
echo "make.sh: wrote $(ls "$here"/*.png | wc -l) figures into $here"
