#!/usr/bin/env python3
"""torch.profiler's CUDA time per kernel for steps of torch_eager.py's model,
eager and under torch.compile (default mode), for any row of the comparison
(read-only: only CUDA work is timed). dvfslab's own side of the same row:
`dvfslab run-workload MODEL --kernel-profile FILE` (docs/workloads.md).

Usage: compile_profile.py --model resnet50 --mode train --batch 128 --size 224 --out FILE
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_eager  # noqa: E402  (the models of the comparison)
from kernel_profile import kernel_table  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--mode", choices=("train", "infer"), required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--size", type=int, required=True, help="image side or sequence length")
    parser.add_argument("--precision", default="bf16")
    parser.add_argument("--sides", default="eager,compile")
    parser.add_argument("--out", required=True, help="JSON file to write")
    args = parser.parse_args()
    config = {"model": args.model, "mode": args.mode, "precision": args.precision, "batch": args.batch,
              "size": args.size, "channels_last": True, "cudnn_benchmark": True}
    result = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "config": config, "steps": {}}
    for side in args.sides.split(","):
        step = torch_eager.eager_step_function(config, torch.device("cuda"), compiled=side == "compile")
        result["steps"][side] = kernel_table(step, top=30)
        print(side, round(result["steps"][side]["total_ms_per_step"], 3), "ms per step", flush=True)
    with open(args.out, "w") as out:
        json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
