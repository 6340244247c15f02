#!/usr/bin/env python3
"""One rank of a data-parallel-shaped job for checking dvfslab's rank markers.

Each rank (RANK / LOCAL_RANK as torchrun sets them) runs bf16 matrix
multiplications on CUDA device LOCAL_RANK modulo the devices it sees, for about
--seconds, and reports each iteration through dvfslab's marker module
(python/dvfslab/markers.py, loaded from the source tree, so no build of the Python
module is needed): 'dvfslab:iter 1 items N rank R of W'. torchrun starts its workers
with none of the launcher's descriptors, which the module handles. Rank 1 and above pause --straggle-ms after every iteration, so
the slowest rank's count differs from rank 0's. No process group is formed:
several ranks may share one GPU. Writes {"rank", "iterations", "seconds"} as one
JSON line to stderr at the end, so a check can compare dvfslab's counts.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "dvfslab"))
import markers  # noqa: E402  (the marker module alone, without the compiled package)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--matmuls-per-iteration", type=int, default=10)
    parser.add_argument("--straggle-ms", type=float, default=20.0)
    args = parser.parse_args()

    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    a = torch.randn(args.size, args.size, device=device, dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device=device, dtype=torch.bfloat16)
    c = torch.empty_like(a)
    iterations = 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        for _ in range(args.matmuls_per_iteration):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize(device)
        if rank > 0:
            time.sleep(args.straggle_ms / 1000.0)
        iterations += 1
        markers.iteration(items=args.matmuls_per_iteration)
    seconds = time.perf_counter() - start
    print(json.dumps({"rank": rank, "iterations": iterations, "seconds": seconds}), file=sys.stderr)


if __name__ == "__main__":
    main()
