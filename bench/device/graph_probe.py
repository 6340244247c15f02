#!/usr/bin/env python3
"""Separates the CUDA-graph effect from everything else for one model.

Times one configuration four ways on the local NVIDIA GPU: PyTorch eager, the same
PyTorch step captured in a CUDA graph, and `dvfslab run-workload` with and without
its CUDA graph. If both graphed runs are slower than both eager runs, the graph is
the cause; if dvfslab is slower both ways, its step differs from PyTorch's. Prints
the ten CUDA kernels that take the most time in one eager PyTorch step.

Usage (after `source bench/device/prepare.sh`):
  python3 bench/device/graph_probe.py --dvfslab "$DVFSLAB" --model gpt2_small --mode infer
Only reads the GPU (no NVML setter is called).
"""
import argparse
import json
import subprocess
import sys
import time

import torch

import torch_eager


def items_per_s(step, items, seconds):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        count += 1
        if count % 5 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return count * items / (time.perf_counter() - start)


def graphed(step):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def dvfslab_items_per_s(binary, config, graph, iterations):
    command = [binary, "run-workload", config["model"], "--batch", str(config["batch"]), "--mode", config["mode"],
               "--precision", config["precision"], "--iters", str(iterations), "--warmup", "3",
               "--torch-device", "cuda", "--json"]
    command += ["--image-size" if config["model"] in torch_eager.IMAGE_MODELS else "--seq-len", str(config["size"])]
    if not graph:
        command.append("--no-cuda-graph")
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)["items_per_s"]


def top_kernels(step, count=10):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        step()
        torch.cuda.synchronize()
    return profile.key_averages().table(sort_by="cuda_time_total", row_limit=count)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dvfslab", required=True)
    parser.add_argument("--model", default="gpt2_small")
    parser.add_argument("--mode", default="infer", choices=("train", "infer"))
    parser.add_argument("--precision", default="bf16")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=1024, help="image size or sequence length")
    parser.add_argument("--seconds", type=float, default=1.5)
    args = parser.parse_args()

    config = dict(model=args.model, mode=args.mode, precision=args.precision, batch=args.batch, size=args.size,
                  channels_last=True, cudnn_benchmark=True)
    items = args.batch if args.model in torch_eager.IMAGE_MODELS else args.batch * args.size
    step = torch_eager.eager_step_function(config, torch.device("cuda"))
    eager = items_per_s(step, items, args.seconds)
    kernels = top_kernels(step)
    replay = graphed(step)
    eager_graph = items_per_s(replay, items, args.seconds)
    del step, replay
    torch.cuda.empty_cache()
    iterations = max(5, round(eager * args.seconds / items))
    ours_graph = dvfslab_items_per_s(args.dvfslab, config, True, iterations)
    ours_eager = dvfslab_items_per_s(args.dvfslab, config, False, iterations)

    label = f"{args.model} {args.mode} {args.precision} b{args.batch} size {args.size}"
    print(f"| {label} | items/s | vs PyTorch eager |\n|---|---:|---:|")
    for name, rate in (("PyTorch eager", eager), ("PyTorch + CUDA graph", eager_graph),
                       ("dvfslab, no graph", ours_eager), ("dvfslab + CUDA graph", ours_graph)):
        print(f"| {name} | {rate:,.0f} | {rate / eager:.3f}× |")
    print(f"\nTop CUDA kernels of one PyTorch eager step:\n{kernels}", file=sys.stderr)


if __name__ == "__main__":
    main()
