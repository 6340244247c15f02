export DVFSLAB_READ_ONLY=1
# Times dvfslab's LibTorch workloads against the same models in PyTorch eager on
# the local NVIDIA GPU (default clocks; nothing on the GPU is changed: the
# benchmark only reads NVML's energy counter). Builds dvfslab against the
# LibTorch inside the installed PyTorch in build/device unless already built.
# Usage: bench/device/torch_vs_eager.sh [torch_eager.py options, e.g. --only resnet50]
# Results: torch_vs_eager.{md,csv,json} in $OUT (default: the current directory).
# With --compile every row also times torch.compile of the eager model
# (torch_vs_compile.{md,csv,json}); the build then overlaps a parallel compile
# of the same configurations (compile_warm.{json,log}) that fills Inductor's
# cache, so the timed run spends its budget on measuring rather than compiling.
# TORCH_COMPILE_WARM_JOBS (default 4) and TORCH_COMPILE_WARM_BUDGET (seconds,
# default 300) size that warm-up.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out_dir="${OUT:-.}"
mkdir -p "$out_dir"

warm_pid=
for arg in "$@"; do
  if [[ "$arg" == --compile ]]; then
    # Compiling needs the GPU only for a few steps per configuration and the
    # build needs only CPUs, so the two run side by side; nothing is timed yet.
    python3 "$repo_root/bench/device/torch_eager.py" --warm-compile-only --out "$out_dir" \
      --jobs "${TORCH_COMPILE_WARM_JOBS:-4}" --warm-budget "${TORCH_COMPILE_WARM_BUDGET:-300}" "$@" \
      >"$out_dir/compile_warm.log" 2>&1 &
    warm_pid=$!
    trap '[[ -n "$warm_pid" ]] && kill "$warm_pid" 2>/dev/null || true' EXIT
  fi
done

# Builds build/device (with LibTorch) unless built, and exports DVFSLAB.
source "$repo_root/bench/device/prepare.sh"
set -euo pipefail

if [[ -n "$warm_pid" ]]; then
  # The timed windows must not share the GPU with the warm-up's workers.
  wait "$warm_pid" || echo "compile warm-up failed (see compile_warm.log); the timed run compiles cold" >&2
  warm_pid=
fi
python3 "$repo_root/bench/device/torch_eager.py" --dvfslab "$DVFSLAB" --out "$out_dir" "$@"
