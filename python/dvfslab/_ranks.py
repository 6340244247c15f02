"""How the ranks of a torch.distributed job agree while each tunes its own GPU
(docs/multi-gpu.md, "Tuning a job on several GPUs"): rank 0 decides the next window
and broadcasts it, so every rank steps at the same boundary to the same setting, and
every window's figures are the job's: energy and items summed over the ranks, the
slowest rank's duration. Both calls are collective: every rank's tuner makes them at
the same window boundaries."""
from __future__ import annotations

import sys
from typing import Any, Optional, Tuple

Figures = Tuple[int, float, float, float]  # iterations, items, duration_s, energy_j


def initialized_process_group() -> Optional[Any]:
    """torch.distributed when the script initialised a process group of more than
    one rank; None otherwise (without importing torch: a script that did not is not
    distributed)."""
    distributed = sys.modules.get("torch.distributed")
    if distributed is None or not distributed.is_available() or not distributed.is_initialized():
        return None
    return distributed if distributed.get_world_size() > 1 else None


class RankAgreement:
    """The two collective calls the native tuner makes at each window boundary."""

    def __init__(self, distributed: Any):
        self._distributed = distributed
        self._torch = sys.modules["torch"]

    @property
    def rank(self) -> int:
        return self._distributed.get_rank()

    def job_figures(self, own: Figures) -> Figures:
        iterations, items, duration_s, energy_j = own
        torch, distributed = self._torch, self._distributed
        sums = torch.tensor([energy_j, items], dtype=torch.float64)
        distributed.all_reduce(sums, op=distributed.ReduceOp.SUM)
        slowest = torch.tensor([duration_s], dtype=torch.float64)
        distributed.all_reduce(slowest, op=distributed.ReduceOp.MAX)
        return iterations, float(sums[1]), float(slowest[0]), float(sums[0])

    def agreed_window(self, own: tuple) -> tuple:
        decision = [own]
        self._distributed.broadcast_object_list(decision, src=0)
        return tuple(decision[0])
