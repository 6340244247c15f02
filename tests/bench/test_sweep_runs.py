"""bench/sweep_runs.py: a failed sweep ends with one line, and a store's points read
back as their mean energy per item over their windows."""
import os
import sqlite3

import pytest

from sweep_runs import mean_energy_per_item, sweep


def test_a_failed_sweep_ends_the_script_with_one_line_naming_the_caller(tmp_path):
    with pytest.raises(SystemExit) as ended:
        sweep("/bin/false", str(tmp_path / "plan.toml"), "sim:v100", "grid", str(tmp_path / "db"), "a caller")
    assert str(ended.value).startswith("a caller: the grid sweep failed")


def test_each_point_is_its_mean_over_windows_and_a_condition_selects_points(tmp_path):
    db = tmp_path / "store.sqlite"
    with sqlite3.connect(db) as store:
        store.executescript(
            "create table points (id integer, role text, sm_mhz integer);"
            "create table measurements (point_id integer, energy_j real, items integer);"
            "insert into points values (1, 'grid', 900), (2, 'grid', 1200), (3, 'default', null);"
            "insert into measurements values (1, 10, 10), (1, 30, 10), (2, 5, 0), (2, 8, 4), (3, 6, 2);")
    assert mean_energy_per_item(str(db), ("sm_mhz",)) == {(900,): pytest.approx(2.0), (1200,): pytest.approx(2.0),
                                                          (None,): pytest.approx(3.0)}
    assert mean_energy_per_item(str(db), ("role", "sm_mhz"), "p.role = 'grid'") == {
        ("grid", 900): pytest.approx(2.0), ("grid", 1200): pytest.approx(2.0)}


@pytest.mark.skipif(not os.environ.get("DVFSLAB_BINARY"), reason="needs DVFSLAB_BINARY (the CMake test sets it)")
def test_a_real_sweeps_totals_are_read_from_what_it_prints(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nname = "sweep_runs test"\n\n[knobs]\nsm_mhz = { count = 3, min = 600 }\n\n'
                    '[[cases]]\nworkloads = ["alexnet"]\nbatch_sizes = [16]\nmodes = ["infer"]\n')
    totals = sweep(os.environ["DVFSLAB_BINARY"], str(plan), "sim:v100", "grid", str(tmp_path / "db"), "test")
    assert totals["points"] >= 3 and totals["windows"] >= totals["points"] and totals["gpu_s"] > 0
