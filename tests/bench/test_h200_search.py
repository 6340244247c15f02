"""bench/h200_search.py: its scoring, and one real case through the dvfslab it is given."""
import os
import sqlite3

import numpy as np
import pytest

from h200_search import energy_by_setting, expected_regret_pct, run


def test_a_choice_at_the_smooth_minimum_has_no_expected_regret_and_one_beside_it_has_the_lines():
    clocks = range(345, 1995, 15)
    energies = {(mhz, None): 1.0 + 1e-6 * (mhz - 1290) ** 2 for mhz in clocks}
    energies[(None, None)] = energies[(1980, None)]
    assert expected_regret_pct(energies, "sm", (1290, None)) == pytest.approx(0, abs=1e-9)
    assert expected_regret_pct(energies, "sm", (1590, None)) == pytest.approx(100 * 0.09, rel=1e-6)
    # The default row is scored as the top of the line.
    assert expected_regret_pct(energies, "sm", (None, None)) == pytest.approx(100 * 1e-6 * 690 ** 2, rel=1e-6)


def test_one_lucky_window_does_not_move_the_expected_minimum():
    watts = range(200, 705, 5)
    rng = np.random.default_rng(4)
    energies = {(None, w): (1.0 + 4e-6 * (w - 400) ** 2) * (1 + 0.002 * rng.standard_normal()) for w in watts}
    energies[(None, 300)] *= 0.97
    assert expected_regret_pct(energies, "pl", (None, 400)) < 0.2
    assert expected_regret_pct(energies, "pl", (None, 300)) > 3


def test_energy_per_item_is_averaged_over_a_settings_windows(tmp_path):
    db = tmp_path / "runs.sqlite"
    connection = sqlite3.connect(db)
    connection.execute("create table points (id, sm_mhz, power_limit_w)")
    connection.execute("create table measurements (point_id, energy_j, items)")
    connection.executemany("insert into points values (?, ?, ?)", [(1, 1290, None), (2, None, None)])
    connection.executemany("insert into measurements values (?, ?, ?)",
                           [(1, 10.0, 100), (1, 12.0, 100), (2, 30.0, 100), (2, 5.0, 0)])
    connection.commit()
    assert energy_by_setting(str(db), "sm") == {(1290, None): pytest.approx(0.11),
                                               (None, None): pytest.approx(0.3)}


def test_three_knobs_key_a_setting_by_its_memory_clock_too(tmp_path):
    db = tmp_path / "runs.sqlite"
    connection = sqlite3.connect(db)
    connection.execute("create table points (id, sm_mhz, mem_mhz, power_limit_w)")
    connection.execute("create table measurements (point_id, energy_j, items)")
    connection.executemany("insert into points values (?, ?, ?, ?)", [(1, 1290, 3201, 333), (2, 1290, 2201, 333)])
    connection.executemany("insert into measurements values (?, ?, ?)", [(1, 10.0, 100), (2, 12.0, 100)])
    connection.commit()
    assert energy_by_setting(str(db), "sm,mem,pl16") == {(1290, 3201, 333): pytest.approx(0.1),
                                                        (1290, 2201, 333): pytest.approx(0.12)}


@pytest.mark.skipif(not os.environ.get("DVFSLAB_BINARY"), reason="needs DVFSLAB_BINARY (the CMake test sets it)")
def test_a_real_search_and_sweep_are_read_back(tmp_path):
    binary = os.environ["DVFSLAB_BINARY"]
    grid = run(binary, str(tmp_path), "sm", "alexnet", "infer", "grid")
    auto = run(binary, str(tmp_path), "sm", "alexnet", "infer", "auto")
    assert grid["probes"] == 111 and grid["windows"] >= 111
    assert 3 <= auto["probes"] < 40 and auto["windows"] >= auto["probes"]
    assert 0 < auto["gpu_s"] < grid["gpu_s"]
    assert tuple(auto["chosen"]) in grid["energies"]
    assert list(tmp_path.iterdir()) == [tmp_path / "plan.toml"]


@pytest.mark.skipif(not os.environ.get("DVFSLAB_BINARY"), reason="needs DVFSLAB_BINARY (the CMake test sets it)")
def test_three_knobs_are_swept_and_searched_with_the_memory_clock_in_the_choice(tmp_path):
    binary = os.environ["DVFSLAB_BINARY"]
    grid = run(binary, str(tmp_path), "sm,mem,pl16", "resnet50", "train", "grid")
    auto = run(binary, str(tmp_path), "sm,mem,pl16", "resnet50", "train", "auto")
    assert grid["probes"] == 1 + 110 * 2 * 16
    assert len(auto["chosen"]) == 3 and tuple(auto["chosen"]) in grid["energies"]
    assert auto["chosen"][1] in (2201, 3201)
    assert auto["probes"] < 100 and auto["gpu_s"] < 0.05 * grid["gpu_s"]


def test_a_limit_between_the_lines_settings_is_scored_by_interpolation():
    energies = {(None, w): 1.0 + 1e-5 * (w - 400) ** 2 for w in range(200, 705, 5)}
    between = expected_regret_pct(energies, "pl", (None, 433))
    assert expected_regret_pct(energies, "pl", (None, 430)) < between < expected_regret_pct(energies, "pl", (None, 435))


def bowl(sm, pl):
    return 1.0 + 1e-6 * (sm - 1290) ** 2 + 4e-6 * (pl - 400) ** 2


def test_on_the_sm_by_power_limit_surface_the_smooth_minimum_has_no_expected_regret():
    energies = {(sm, pl): bowl(sm, pl) for sm in range(345, 1995, 15) for pl in range(200, 705, 5)}
    energies[(None, None)] = energies[(1980, 700)]
    assert expected_regret_pct(energies, "sm,pl", (1290, 400)) == pytest.approx(0, abs=1e-9)
    assert expected_regret_pct(energies, "sm,pl", (1590, 450)) == pytest.approx(100 * (0.09 + 0.01), rel=1e-6)
    # The default row is scored as the top of both knobs.
    assert expected_regret_pct(energies, "sm,pl", (None, None)) == pytest.approx(
        100 * (bowl(1980, 700) - 1), rel=1e-6)


def test_the_luckiest_window_of_a_noisy_surface_is_not_its_expected_minimum():
    rng = np.random.default_rng(5)
    energies = {(sm, pl): bowl(sm, pl) * (1 + 0.005 * rng.standard_normal())
                for sm in range(345, 1995, 15) for pl in range(200, 705, 5)}
    energies[(1500, 600)] = min(energies.values()) * 0.99
    assert expected_regret_pct(energies, "sm,pl", (1290, 400)) < 0.2
    assert expected_regret_pct(energies, "sm,pl", (1500, 600)) > 4


def test_with_three_knobs_the_smooth_minimum_over_both_memory_clocks_has_no_expected_regret():
    limits = [200 + round(500 * i / 15) for i in range(16)]
    energies = {(sm, mem, pl): bowl(sm, pl) * (1.0 if mem == 3201 else 1.05)
                for sm in range(345, 1995, 15) for mem in (2201, 3201) for pl in limits}
    energies[(None, None, None)] = energies[(1980, 3201, 700)]
    assert 400 in limits
    assert expected_regret_pct(energies, "sm,mem,pl16", (1290, 3201, 400)) == pytest.approx(0, abs=1e-6)
    # The other memory clock's surface is 5 % above it everywhere.
    assert expected_regret_pct(energies, "sm,mem,pl16", (1290, 2201, 400)) == pytest.approx(5, rel=1e-3)
    # The default row is scored as the top of every knob.
    assert expected_regret_pct(energies, "sm,mem,pl16", (None, None, None)) == pytest.approx(
        100 * (bowl(1980, 700) - 1), rel=1e-3)
