"""dvfslab.Tuner under torch.distributed: two gloo ranks on the CPU
(examples/python/train_ddp.py --tune), each tuning its own simulated GPU on virtual
time. Rank 0 decides and every rank steps at the same boundary, so both ranks hold
the same setting after every step; both GPUs are restored; the windows' figures are
the job's, so both ranks report the same total energy."""
import json
import os

import pytest

from conftest import run_python

pytest.importorskip("torch.distributed", reason="PyTorch (python3-torch) is needed for the gloo ranks")


def run_ddp_example(source_dir, tmp_path, *extra):
    record = tmp_path / "ranks"
    record.mkdir()
    result = run_python([os.path.join(source_dir, "examples/python/train_ddp.py"), "--ranks", "2", "--steps", "40",
                         "--tune", "sim:h200x2", "--record", str(record), *extra],
                        {"OMP_NUM_THREADS": "1"}, timeout=60)
    assert result.returncode == 0, result.stderr
    return result, [json.loads((record / f"rank-{rank}.json").read_text()) for rank in (0, 1)]


def test_both_ranks_apply_the_same_setting_at_every_step_and_both_gpus_are_restored(source_dir, tmp_path):
    result, (rank0, rank1) = run_ddp_example(source_dir, tmp_path)
    assert rank0["uuid"] != rank1["uuid"], "each rank controls a GPU of its own"
    assert len(rank0["settings"]) == 40
    assert rank0["settings"] == rank1["settings"], "every rank steps to rank 0's setting at the same step"
    assert len(set(rank0["settings"])) > 2, "the tuner probed several settings"
    assert rank0["held"] and rank0["held"] == rank1["held"]
    for rank in (rank0, rank1):
        assert rank["restore_actions"], rank
        assert rank["sm_mhz_after"] == rank["sm_mhz_before"] == 1980, "the GPU runs as found after the tuner"
    # Every window's figures are the job's (all-reduced), so both reports agree.
    assert rank0["job_energy_j"] == rank1["job_energy_j"] > 0
    assert "rank 0: loss" in result.stdout and "rank 1: loss" in result.stdout

