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
In windows mode each window is --seconds-per-sync (0.25 s) chunks of queued work,
synchronised only at the chunk's end: a copy takes about 0.5 ms, and syncing every
few copies left the GPU idle for the host's loop turn so often that the jitter of
those gaps showed in the windows' power (sd 0.3-0.7 % of 1 s windows on the H200,
0.07 % without them).
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


def steps_per_interval(step, seconds):
    """How many steps take about `seconds`, timed after the warm-up."""
    torch.cuda.synchronize()
    start = time.monotonic()
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    return max(1, round(seconds / ((time.monotonic() - start) / 10)))


def run_chunks(step, seconds, steps_per_chunk, chunk_seconds):
    """Runs about `seconds` of work as whole chunks queued back to back, one sync each."""
    for _ in range(max(1, round(seconds / chunk_seconds))):
        for _ in range(steps_per_chunk):
            step()
        torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["windows", "tail"], required=True)
    parser.add_argument("--load", choices=["gemm", "copy"], default="gemm")
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--warmup-seconds", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--tail-seconds", type=float, default=3.0)
    parser.add_argument("--seconds-per-sync", type=float, default=0.25)
    args = parser.parse_args()
    mark = marker_writer()
    step = make_step(args.load, args.size)
    run_for(step, args.warmup_seconds)
    if args.mode == "windows":
        # The load runs on between windows: each begin/end is written right after a sync.
        chunk = args.seconds_per_sync
        per_chunk = steps_per_interval(step, chunk)
        for i in range(20):
            mark(f"dvfslab:begin w1s_{i:02d}")
            run_chunks(step, 1.0, per_chunk, chunk)
            mark(f"dvfslab:end w1s_{i:02d}")
        mark("dvfslab:begin w20s")
        run_chunks(step, 20.0, per_chunk, chunk)
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
