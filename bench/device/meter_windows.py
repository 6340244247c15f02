#!/usr/bin/env python3
"""Steady GPU loads with dvfslab markers, for bench/device/meter_windows.sh.

--mode windows: a warm-up, then twenty 1 s named windows ('w1s_00' ... 'w1s_19')
  of one steady load back to back, then one 20 s window ('w20s') of the same load.
--mode tail: a bf16 GEMM loop of about --seconds inside 'dvfslab:begin load' /
  'dvfslab:end load', writing 'dvfslab:iter 20 items 20' after every 20 GEMMs,
  then idling and tearing down for --tail-seconds without closing the marker
  descriptor (as most scripts do): the steady window must stop at the last marker.
--load gemm: bf16 matrix multiplications of --size (8192) squared; --load copy:
  device-to-device copies of a 1 GiB buffer.
Changes no GPU setting.
"""
import argparse
import os
import time

import torch


def marker_writer():
    fd = os.environ.get("DVFSLAB_MARK_FD")
    if fd is None:
        return lambda line: None
    number = int(fd)
    return lambda line: os.write(number, (line + "\n").encode())


def make_step(load, size):
    if load == "gemm":
        a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        c = torch.empty_like(a)
        return lambda: torch.matmul(a, b, out=c)
    source = torch.empty(1 << 30, device="cuda", dtype=torch.uint8)
    target = torch.empty_like(source)
    return lambda: target.copy_(source)


def run_for(step, seconds, steps_per_sync=20, mark=None):
    """Runs the load for about `seconds`, synchronising every steps_per_sync steps."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(steps_per_sync):
            step()
        torch.cuda.synchronize()
        if mark:
            mark(f"dvfslab:iter {steps_per_sync} items {steps_per_sync}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["windows", "tail"], required=True)
    parser.add_argument("--load", choices=["gemm", "copy"], default="gemm")
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--warmup-seconds", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--tail-seconds", type=float, default=3.0)
    args = parser.parse_args()
    mark = marker_writer()
    step = make_step(args.load, args.size)
    run_for(step, args.warmup_seconds)
    if args.mode == "windows":
        # The load runs on between windows: each begin/end is written right after a sync.
        for i in range(20):
            mark(f"dvfslab:begin w1s_{i:02d}")
            run_for(step, 1.0, steps_per_sync=5)
            mark(f"dvfslab:end w1s_{i:02d}")
        mark("dvfslab:begin w20s")
        run_for(step, 20.0, steps_per_sync=5)
        mark("dvfslab:end w20s")
    else:
        mark("dvfslab:begin load")
        run_for(step, args.seconds, mark=mark)
        mark("dvfslab:end load")
        # Tear-down with the marker descriptor still open: idle, then free memory.
        time.sleep(args.tail_seconds)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
