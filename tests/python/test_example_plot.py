"""examples/python/plot_results.py: a database into pandas, one matplotlib figure in a file."""
import os

import pytest

from conftest import run_python


def test_plot_results_draws_a_database_into_a_png(source_dir, database, tmp_path):
    pytest.importorskip("matplotlib")
    figure = tmp_path / "energy.png"
    result = run_python([os.path.join(source_dir, "examples/python/plot_results.py"), str(database),
                         "--out", str(figure)], {"MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{figure}: 2 of 2 cases, energy per item against sm_mhz"
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and figure.stat().st_size > 10_000
