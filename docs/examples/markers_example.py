"""Reports progress to `dvfslab measure` through the marker protocol.

Run it as:  dvfslab measure --skip-iters 1 -- python3 markers_example.py
Without dvfslab (DVFSLAB_MARK_FD unset) it runs the same and reports nothing.
"""
import argparse
import os
import time


def open_markers():
    fd = os.environ.get("DVFSLAB_MARK_FD")
    # Line-buffered, so each marker reaches dvfslab when it is written.
    return os.fdopen(int(fd), "w", buffering=1) if fd else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()

    markers = open_markers()
    if markers:
        print("dvfslab:begin train", file=markers)
    for _ in range(args.steps):
        time.sleep(0.01)  # one training step would run here
        if markers:
            print(f"dvfslab:iter 1 items {args.batch}", file=markers)
    if markers:
        print("dvfslab:end train", file=markers)
        markers.close()  # ends the steady-state window before tear-down


if __name__ == "__main__":
    main()
