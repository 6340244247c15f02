"""A program with set-up before its loop, reporting the loop through the marker protocol.

Run it as:  dvfslab measure --device sim:h200 -- python3 setup_then_loop.py
It sleeps --setup seconds (loading, compiling), then runs --iterations iterations of
--seconds each, writing `dvfslab:iter 1 items <batch>` as each one ends.
"""
import argparse
import os
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--setup", type=float, default=5.0)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()

    fd = os.environ.get("DVFSLAB_MARK_FD")
    markers = os.fdopen(int(fd), "w", buffering=1) if fd else None
    time.sleep(args.setup)
    for _ in range(args.iterations):
        time.sleep(args.seconds)  # one iteration would run here
        if markers:
            print(f"dvfslab:iter 1 items {args.batch}", file=markers)


if __name__ == "__main__":
    main()
