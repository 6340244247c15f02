"""examples/python/train_tuned.py: the tuned training loop (CPU PyTorch, simulated GPU)."""
import json
import os

import pytest

from conftest import run_python


def test_train_tuned_holds_a_lower_sm_clock_on_a_simulated_gpu_and_restores_it(source_dir, tmp_path):
    pytest.importorskip("torch")
    summary_file = tmp_path / "summary.json"
    result = run_python([os.path.join(source_dir, "examples/python/train_tuned.py"), "--device", "sim:v100",
                         "--steps", "200", "--warmup", "5", "--probe", "5", "--batch", "32",
                         "--json", str(summary_file)], timeout=120)
    assert result.returncode == 0, result.stderr
    assert "# held SIMULATED: sm=" in result.stdout
    summary = json.loads(summary_file.read_text())
    report = summary["report"]
    assert summary["simulated"] is True and summary["last_loss"] < summary["first_loss"]
    assert report["iterations"] == 200 and report["items"] == 200 * 32
    assert summary["held"]["sm_mhz"] is not None and report["phases"][0]["best"] == summary["held"]
    assert report["restore_actions"]
