"""examples/python/train_measured.py: the measured training loop (CPU PyTorch, simulated GPU)."""
import json
import os

import pytest

from conftest import run_python


def test_train_measured_runs_on_the_cpu_against_a_simulated_gpu(source_dir, tmp_path):
    pytest.importorskip("torch")
    summary_file = tmp_path / "summary.json"
    result = run_python([os.path.join(source_dir, "examples/python/train_measured.py"), "--device", "sim:v100",
                         "--steps", "12", "--warmup", "2", "--batch", "32", "--json", str(summary_file)],
                        timeout=120)
    assert result.returncode == 0, result.stderr
    step_lines = [line for line in result.stdout.splitlines() if not line.startswith("#")]
    assert len(step_lines) == 12 and all(line.endswith("SIMULATED") for line in step_lines)
    summary = json.loads(summary_file.read_text())
    assert summary["simulated"] is True and summary["last_loss"] < summary["first_loss"]
    assert summary["train"]["iterations"] == 12 and summary["train"]["items"] == 12 * 32
    assert summary["steady"]["iterations"] == 10
    assert summary["train"]["energy_j"] > summary["steady"]["energy_j"] > 0
