#!/usr/bin/env python3
"""dvfslab.Meter from Python on a real GPU, read-only (issue 17):

  energy:     a Meter window around a steady bf16 GEMM load against NVML's energy
              counter read directly (ctypes, read-only calls) at the window's two
              ends; target: within 1 %.
  throughput: the load with per-step metering (meter.step() after every step)
              against the same load without a Meter; target: change <= 0.5 %.

Modes, interleaved over --runs rounds: `plain` (no Meter: the direct reads only),
`window` (one Meter window), `steps` (the window plus meter.step() per step). A
step is --matmuls-per-step GEMMs then torch.cuda.synchronize(), in every mode, so
the modes differ only in metering. Writes python_meter.json (summary and every
run) and python_meter.csv (one row per run) to --out.

The direct counter difference is itself uncertain by up to one sensor update
(~100 ms of power) at each end, which the Meter's estimate between updates is
not: on a 30 s window of ~700 W that is up to about 0.3 % each end.

CUDA device 0 must be NVML device 0: run with CUDA_DEVICE_ORDER=PCI_BUS_ID (the
runner python_meter.sh does).
"""
import argparse
import csv
import ctypes
import json
import os
import statistics
import sys
import time

import torch

import dvfslab


class DirectNvmlEnergy:
    """nvmlDeviceGetTotalEnergyConsumption through ctypes; only read-only calls."""

    def __init__(self, index):
        self._library = ctypes.CDLL("libnvidia-ml.so.1")
        self._check(self._library.nvmlInit_v2(), "nvmlInit_v2")
        self._handle = ctypes.c_void_p()
        self._check(self._library.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(self._handle)),
                    "nvmlDeviceGetHandleByIndex_v2")
        self._millijoules = ctypes.c_ulonglong()

    @staticmethod
    def _check(code, call):
        if code != 0:
            raise RuntimeError(f"{call} failed with NVML code {code}")

    def joules(self):
        self._check(self._library.nvmlDeviceGetTotalEnergyConsumption(self._handle, ctypes.byref(self._millijoules)),
                    "nvmlDeviceGetTotalEnergyConsumption")
        return self._millijoules.value / 1000.0


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="0", help="dvfslab device spec of NVML device --index (default 0)")
    parser.add_argument("--index", type=int, default=0, help="NVML and CUDA index of the GPU (default 0)")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured window per run (default 30)")
    parser.add_argument("--warmup-seconds", type=float, default=10.0, help="load before the first run (default 10)")
    parser.add_argument("--runs", type=int, default=3, help="rounds of the three modes (default 3)")
    parser.add_argument("--size", type=int, default=8192, help="square matrix size (default 8192)")
    parser.add_argument("--matmuls-per-step", type=int, default=50, help="GEMMs per step (default 50)")
    parser.add_argument("--out", default=".", help="folder for python_meter.json and .csv")
    return parser.parse_args()


def run_once(mode, gpu, direct, step, seconds):
    """One measured window of `mode`; returns its row."""
    torch.cuda.synchronize()
    meter = dvfslab.Meter(gpu) if mode != "plain" else None
    step_call_s = 0.0
    steps = 0
    # The direct reads sit right beside the window's ends, after the GPU has finished.
    start_j = direct.joules()
    start_s = time.perf_counter()
    if meter:
        meter.begin("load")
    while time.perf_counter() - start_s < seconds:
        step()
        steps += 1
        if mode == "steps":
            before = time.perf_counter()
            meter.step(items=1)
            step_call_s += time.perf_counter() - before
    measured = meter.end("load") if meter else None
    end_s = time.perf_counter()
    end_j = direct.joules()
    if meter:
        meter.close()
    row = {"mode": mode, "steps": steps, "seconds": end_s - start_s, "steps_per_s": steps / (end_s - start_s),
           "direct_energy_j": end_j - start_j, "direct_mean_power_w": (end_j - start_j) / (end_s - start_s)}
    if measured:
        row.update({"meter_energy_j": measured.energy_j, "meter_energy_error_j": measured.energy_error_j,
                    "meter_duration_s": measured.duration_s, "meter_integrated_difference_pct":
                    measured.energy_difference_pct, "meter_flags": ",".join(measured.flags),
                    "meter_sm_mhz_mean": measured.sm_mhz_mean,
                    "energy_difference_pct": 100.0 * (measured.energy_j - row["direct_energy_j"])
                    / row["direct_energy_j"]})
    if mode == "steps":
        row["step_call_us_mean"] = 1e6 * step_call_s / steps
    return row


def summarise(rows, args, gpu):
    def rates(mode):
        return [row["steps_per_s"] for row in rows if row["mode"] == mode]

    plain = statistics.median(rates("plain"))
    change = {mode: 100.0 * (statistics.median(rates(mode)) - plain) / plain for mode in ("window", "steps")}
    energy = [abs(row["energy_difference_pct"]) for row in rows if "energy_difference_pct" in row]
    return {
        "device": gpu.name, "uuid": gpu.uuid, "read_only": gpu.read_only, "dvfslab": dvfslab.__version__,
        "torch": torch.__version__, "size": args.size, "matmuls_per_step": args.matmuls_per_step,
        "seconds_per_run": args.seconds, "runs_per_mode": args.runs,
        "energy_difference_pct_worst": max(energy),
        "energy_target_met": max(energy) <= 1.0,
        "throughput_change_pct_window": change["window"],
        "throughput_change_pct_steps": change["steps"],
        "throughput_target_met": abs(change["steps"]) <= 0.5,
        "step_call_us_mean": statistics.mean(row["step_call_us_mean"] for row in rows if row["mode"] == "steps"),
        "runs": rows,
    }


def main():
    args = parse_arguments()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda", args.index)
    gpu = dvfslab.open(args.device)
    direct = DirectNvmlEnergy(args.index)
    a = torch.randn(args.size, args.size, device=device, dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device=device, dtype=torch.bfloat16)
    c = torch.empty_like(a)

    def step():
        for _ in range(args.matmuls_per_step):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize(device)

    warmup_end = time.perf_counter() + args.warmup_seconds
    while time.perf_counter() < warmup_end:
        step()
    rows = []
    for run in range(1, args.runs + 1):
        for mode in ("plain", "window", "steps"):
            row = run_once(mode, gpu, direct, step, args.seconds)
            row["run"] = run
            rows.append(row)
            print(f"python_meter: run {run} {mode}: {row['steps_per_s']:.3f} steps/s, direct "
                  f"{row['direct_energy_j']:.1f} J" + (f", meter {row['meter_energy_j']:.1f} J "
                                                      f"({row['energy_difference_pct']:+.3f} %)"
                                                      if "meter_energy_j" in row else ""), file=sys.stderr)
    summary = summarise(rows, args, gpu)
    with open(os.path.join(args.out, "python_meter.json"), "w") as out:
        json.dump(summary, out, indent=2)
    columns = sorted({key for row in rows for key in row})
    with open(os.path.join(args.out, "python_meter.csv"), "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    print(f"energy: worst |meter - direct| {summary['energy_difference_pct_worst']:.3f} % (target <= 1 %): "
          f"{'met' if summary['energy_target_met'] else 'MISSED'}")
    print(f"throughput: window {summary['throughput_change_pct_window']:+.3f} %, per-step metering "
          f"{summary['throughput_change_pct_steps']:+.3f} % (target <= 0.5 %): "
          f"{'met' if summary['throughput_target_met'] else 'MISSED'}; meter.step() "
          f"{summary['step_call_us_mean']:.0f} us per call")
    return 0 if summary["energy_target_met"] and summary["throughput_target_met"] else 3


if __name__ == "__main__":
    sys.exit(main())
