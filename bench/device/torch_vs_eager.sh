export DVFSLAB_READ_ONLY=1
# Times dvfslab's LibTorch workloads against the same models in PyTorch eager on
# the local NVIDIA GPU (default clocks; nothing on the GPU is changed: the
# benchmark only reads NVML's energy counter). Builds dvfslab against the
# LibTorch inside the installed PyTorch in build/device unless already built.
# Usage: bench/device/torch_vs_eager.sh [torch_eager.py options, e.g. --only resnet50]
# Results: torch_vs_eager.{md,csv,json} in $OUT (default: the current directory).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Builds build/device (with LibTorch) unless built, and exports DVFSLAB.
source "$repo_root/bench/device/prepare.sh"
set -euo pipefail

out_dir="${OUT:-.}"
mkdir -p "$out_dir"
python3 "$repo_root/bench/device/torch_eager.py" --dvfslab "$DVFSLAB" --out "$out_dir" "$@"
