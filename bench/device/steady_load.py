#!/usr/bin/env python3
"""A steady GPU load that measures its own energy, to check `dvfslab measure`.

Runs bf16 matrix multiplications back to back: a warm-up, then a marked window of
about --seconds. Over exactly that window it reads NVML's cumulative energy counter
itself (read-only NVML calls: nvidia-ml-py when installed, else ctypes on
libnvidia-ml.so.1), and reports iterations, throughput and energy as JSON (to
--out, or stdout). When DVFSLAB_MARK_FD is set it also emits dvfslab markers:
'dvfslab:iter' per iteration (warm-up included) and 'dvfslab:begin/end steady'
around the window, so dvfslab's window and its own are the same.

The NVML device is the one with the same PCI bus id as CUDA device 0 (with an
older PyTorch that does not report it: NVML index 0; set CUDA_DEVICE_ORDER=PCI_BUS_ID
so that the two agree).
"""
import argparse
import ctypes
import json
import os
import sys
import time

import torch


class NvmlEnergy:
    """Reads nvmlDeviceGetTotalEnergyConsumption (mJ since driver load)."""

    def __init__(self, pci_bus_id):
        try:
            import pynvml  # nvidia-ml-py

            pynvml.nvmlInit()
            if pci_bus_id:
                self._handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
            else:
                self._handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            self._read = lambda: pynvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
            self.source = "nvidia-ml-py"
        except ImportError:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            self._check(lib.nvmlInit_v2())
            handle = ctypes.c_void_p()
            if pci_bus_id:
                self._check(lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(handle)))
            else:
                self._check(lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)))
            energy = ctypes.c_ulonglong()

            def read():
                self._check(lib.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(energy)))
                return energy.value

            self._read = read
            self.source = "ctypes"

    @staticmethod
    def _check(code):
        if code != 0:
            raise RuntimeError(f"NVML call failed with code {code}")

    def joules(self):
        return self._read() / 1000.0


class Markers:
    def __init__(self):
        fd = os.environ.get("DVFSLAB_MARK_FD")
        self._fd = int(fd) if fd else None

    def write(self, line):
        if self._fd is not None:
            os.write(self._fd, (line + "\n").encode())

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def write_result(result, path):
    """Writes the JSON result to path, or to stdout when no path is given."""
    text = json.dumps(result, indent=2)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


def cuda_pci_bus_id(device):
    props = torch.cuda.get_device_properties(device)
    if not all(hasattr(props, f) for f in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        return None
    return f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the measured window")
    parser.add_argument("--warmup-seconds", type=float, default=5.0, help="unmeasured warm-up before it")
    parser.add_argument("--size", type=int, default=8192, help="square matrix size")
    parser.add_argument("--matmuls-per-iteration", type=int, default=20)
    parser.add_argument("--out", help="write the JSON result here instead of stdout")
    args = parser.parse_args()

    device = torch.device("cuda", 0)
    energy = NvmlEnergy(cuda_pci_bus_id(device))
    markers = Markers()
    a = torch.randn(args.size, args.size, device=device, dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device=device, dtype=torch.bfloat16)
    c = torch.empty_like(a)

    def iteration():
        for _ in range(args.matmuls_per_iteration):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize(device)
        markers.write(f"dvfslab:iter 1 items {args.matmuls_per_iteration}")

    warmup_end = time.perf_counter() + args.warmup_seconds
    warmup_iterations = 0
    while time.perf_counter() < warmup_end:
        iteration()
        warmup_iterations += 1

    # Both readings sit right beside the markers, after the GPU has finished.
    start_j = energy.joules()
    start_s = time.perf_counter()
    markers.write("dvfslab:begin steady")
    iterations = 0
    while time.perf_counter() - start_s < args.seconds:
        iteration()
        iterations += 1
    end_s = time.perf_counter()
    end_j = energy.joules()
    markers.write("dvfslab:end steady")
    markers.close()

    seconds = end_s - start_s
    matmuls = iterations * args.matmuls_per_iteration
    result = {
        "device": torch.cuda.get_device_name(device),
        "nvml": energy.source,
        "size": args.size,
        "warmup_iterations": warmup_iterations,
        "iterations": iterations,
        "matmuls": matmuls,
        "seconds": seconds,
        "matmuls_per_s": matmuls / seconds,
        "tflops": 2.0 * args.size**3 * matmuls / seconds / 1e12,
        "energy_j": end_j - start_j,
        "mean_power_w": (end_j - start_j) / seconds,
    }
    write_result(result, args.out)


if __name__ == "__main__":
    sys.exit(main())
