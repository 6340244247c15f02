"""torch.profiler's CUDA time per kernel for a few steps of a model step function,
shared by the per-model profiling scripts beside it (read-only: only CUDA work is
timed, nothing on the GPU is changed)."""
import time

import torch


def time_cuda(function, repeats=20):
    """Mean seconds of one call of `function`, after three warm-up calls."""
    for _ in range(3):
        function()
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for _ in range(repeats):
        function()
    torch.cuda.synchronize()
    return (time.perf_counter() - begin) / repeats


def kernel_table(step, steps=3, top=12):
    """The `top` most expensive kernels of `step` and the total CUDA time per step."""
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    kernels = []
    for event in profile.key_averages():
        cuda_us = getattr(event, "device_time_total", None)
        if cuda_us is None:
            cuda_us = event.cuda_time_total
        if cuda_us > 0:
            kernels.append({"name": event.key[:160], "calls_per_step": event.count / steps,
                            "ms_per_step": cuda_us / steps / 1e3})
    kernels.sort(key=lambda k: -k["ms_per_step"])
    return {"total_ms_per_step": sum(k["ms_per_step"] for k in kernels), "top": kernels[:top]}
