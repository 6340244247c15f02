#!/usr/bin/env python3
"""Where GPT-2 small's step time goes, eager against torch.compile (read-only).

Two measurements, written as JSON to --out:

1. The language-model head alone: a bf16 [tokens, 768] x [vocabulary, 768]^T
   product (forward, and the two backward products) at GPT-2's vocabulary of
   50,257 and at 50,304 (the next multiple of 64). An odd row count makes the
   logits' leading dimension misaligned for cuBLAS's tensor-core kernels.
2. torch.profiler's CUDA time per kernel for one eager step and one compiled step
   of bench/device/torch_eager.py's GPT-2 small (the same model dvfslab builds),
   the ten most expensive kernels of each.

Nothing on the GPU is changed: only CUDA work is timed.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_eager  # noqa: E402  (the models of the comparison)
from kernel_profile import kernel_table, time_cuda  # noqa: E402


def head_timings(tokens):
    rows = []
    for vocabulary in (50257, 50304):
        x = torch.randn(tokens, 768, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(vocabulary, 768, device="cuda", dtype=torch.bfloat16)
        grad = torch.randn(tokens, vocabulary, device="cuda", dtype=torch.bfloat16)
        forward_s = time_cuda(lambda: F.linear(x, w))
        grad_input_s = time_cuda(lambda: grad @ w)
        grad_weight_s = time_cuda(lambda: grad.t() @ x)
        flop = 2.0 * tokens * 768 * vocabulary
        rows.append({"vocabulary": vocabulary, "tokens": tokens,
                     "forward_ms": forward_s * 1e3, "grad_input_ms": grad_input_s * 1e3,
                     "grad_weight_ms": grad_weight_s * 1e3,
                     "forward_tflops": flop / forward_s / 1e12})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--modes", default="infer,train")
    args = parser.parse_args()
    result = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
              "head": head_timings(8 * 1024), "steps": {}}
    print(json.dumps(result["head"], indent=1), flush=True)
    for mode in args.modes.split(","):
        config = {"model": "gpt2_small", "mode": mode, "precision": "bf16", "batch": 8, "size": 1024,
                  "channels_last": False, "cudnn_benchmark": True}
        for compiled in (False, True):
            step = torch_eager.eager_step_function(config, torch.device("cuda"), compiled)
            key = f"{mode}/{'compile' if compiled else 'eager'}"
            result["steps"][key] = kernel_table(step)
            print(key, json.dumps(result["steps"][key], indent=1), flush=True)
    with open(args.out, "w") as out:
        json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
