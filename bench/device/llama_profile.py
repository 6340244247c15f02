#!/usr/bin/env python3
"""Where the Llama decoder's step time goes, eager against torch.compile, and what
the candidate replacements of its element-wise parts cost (read-only).

Two measurements, written as JSON to --out:

1. Forward + backward time of each part of a 125m block at the comparison's
   shape (8 x 1024 tokens, width 768, 12 heads, 4 KV heads, bf16 autocast), in
   the form dvfslab and bench/device/torch_eager.py write today and in the
   alternatives LibTorch offers: RMSNorm written out in FP32 against
   torch.rms_norm; grouped-query attention with the key/value heads copied
   (repeat_interleave) against scaled_dot_product_attention's enable_gqa; the
   rotary embedding with a concatenated rotated half against a rolled one.
2. torch.profiler's CUDA time per kernel for one eager and one compiled step of
   torch_eager.py's Llama125m (the model dvfslab's `llama` builds).

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

BATCH, TOKENS, WIDTH, HEADS, KV_HEADS = 8, 1024, 768, 12, 4
HEAD_DIM = WIDTH // HEADS


def forward_backward(function, *inputs):
    """A callable running function(*inputs) under bf16 autocast and its backward."""
    def run():
        for tensor in inputs:
            tensor.grad = None
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = function(*inputs)
        out.backward(torch.ones_like(out))
    return run


def rotate_rolled(x, cos, signed_sin):
    # signed_sin is [-sin, sin] over the two halves, so rolling x by half a head
    # gives the rotated half's product without a negation or a concatenation.
    return torch.addcmul(x * cos, torch.roll(x, x.shape[-1] // 2, -1), signed_sin)


def part_timings():
    device = torch.device("cuda")
    rows = {}
    residual = torch.randn(BATCH, TOKENS, WIDTH, device=device, requires_grad=True)
    gain = torch.ones(WIDTH, device=device, requires_grad=True)
    rows["rms_norm/written_out_fp32"] = forward_backward(torch_eager.rms_norm, residual, gain)
    if hasattr(torch, "rms_norm"):
        rows["rms_norm/torch.rms_norm"] = forward_backward(
            lambda x, g: torch.rms_norm(x, (WIDTH,), g, 1e-5), residual, gain)

    def heads(count):
        return torch.randn(BATCH, count, TOKENS, HEAD_DIM, device=device, dtype=torch.bfloat16,
                           requires_grad=True)
    query, key, value = heads(HEADS), heads(KV_HEADS), heads(KV_HEADS)
    groups = HEADS // KV_HEADS
    rows["attention/repeat_interleave"] = forward_backward(
        lambda q, k, v: F.scaled_dot_product_attention(q, k.repeat_interleave(groups, 1),
                                                       v.repeat_interleave(groups, 1), is_causal=True),
        query, key, value)
    rows["attention/enable_gqa"] = forward_backward(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        query, key, value)

    model = torch_eager.Llama125m().to(device)
    cos, sin = model.rotary_cos[:TOKENS], model.rotary_sin[:TOKENS]
    half = HEAD_DIM // 2
    signed_sin = torch.cat((-sin[:, :half], sin[:, half:]), -1).to(torch.bfloat16)
    cos16 = cos.to(torch.bfloat16)
    rows["rotary/concatenated_half"] = forward_backward(lambda q: torch_eager.rotate(q, cos, sin), query)
    rows["rotary/rolled_half"] = forward_backward(lambda q: rotate_rolled(q, cos16, signed_sin), query)

    gate = torch.randn(BATCH, TOKENS, 2048, device=device, dtype=torch.bfloat16, requires_grad=True)
    up = torch.randn_like(gate, requires_grad=True)
    rows["swiglu/silu_times_up"] = forward_backward(lambda a, b: F.silu(a) * b, gate, up)
    return {name: time_cuda(run) * 1e3 for name, run in rows.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--modes", default="train,infer")
    args = parser.parse_args()
    result = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
              "parts_ms_forward_backward": part_timings(), "steps": {}}
    print(json.dumps(result["parts_ms_forward_backward"], indent=1), flush=True)
    for mode in args.modes.split(","):
        config = {"model": "llama", "mode": mode, "precision": "bf16", "batch": BATCH, "size": TOKENS,
                  "channels_last": False, "cudnn_benchmark": True}
        for compiled in (False, True):
            step = torch_eager.eager_step_function(config, torch.device("cuda"), compiled)
            key = f"{mode}/{'compile' if compiled else 'eager'}"
            result["steps"][key] = kernel_table(step, top=25)
            print(key, json.dumps(result["steps"][key], indent=1), flush=True)
    with open(args.out, "w") as out:
        json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
