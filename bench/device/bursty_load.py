#!/usr/bin/env python3
"""A GPU load that alternates busy and idle periods, to check the meter's busy clocks.

bf16 matrix multiplications back to back for --busy seconds, then nothing for --idle
seconds, repeated for about --seconds; with --idle 0 a steady load. When
DVFSLAB_MARK_FD is set it emits dvfslab markers: 'dvfslab:iter' per multiplication
batch and 'dvfslab:begin/end steady' around the whole pattern (after a warm-up), so
`dvfslab measure` reports one window holding both kinds of period. Changes no GPU
setting.
"""
import argparse
import os
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--busy", type=float, default=2.0, help="seconds of work per period")
    parser.add_argument("--idle", type=float, default=2.0, help="seconds without work per period")
    parser.add_argument("--size", type=int, default=8192)
    args = parser.parse_args()
    fd = os.environ.get("DVFSLAB_MARK_FD")
    mark = (lambda line: os.write(int(fd), (line + "\n").encode())) if fd else (lambda line: None)

    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)

    def work(seconds):
        batches = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for _ in range(8):
                torch.mm(a, b)
            torch.cuda.synchronize()
            batches += 1
            mark("dvfslab:iter 1 items 8")
        return batches

    work(3.0)  # warm-up: clocks and caches settle before the window
    mark("dvfslab:begin steady")
    start = time.monotonic()
    while time.monotonic() - start < args.seconds:
        work(args.busy)
        if args.idle > 0:
            time.sleep(args.idle)
    mark("dvfslab:end steady")


if __name__ == "__main__":
    main()
