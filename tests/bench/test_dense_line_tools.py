"""The dense-line scoring tools of bench/ (expected_curve.py, dense_clock_map.py, dense_model_shape.py)."""
import numpy as np

from dense_clock_map import map_guided_regrets, residuals, shared_share
from dense_model_shape import fitted_indices, guided_search, power_shapes, score
from expected_curve import local_quadratic, residual_spread


def test_a_quadratic_line_is_its_own_expected_value():
    clocks = np.arange(50, dtype=float)
    line = 100 + 0.3 * (clocks - 20) ** 2
    assert np.allclose(local_quadratic(line, 7), line)


def test_the_residual_spread_of_a_noisy_line_is_its_noise():
    rng = np.random.default_rng(3)
    clocks = np.arange(140, dtype=float)
    line = 100 + 0.01 * (clocks - 70) ** 2
    noisy = line * (1 + 0.03 * rng.standard_normal(len(line)))
    assert 0.025 < residual_spread(noisy, local_quadratic(noisy, 7)) < 0.035


def synthetic_gpu(workloads=30, seed=5):
    """Convex lines whose minima move with the workload, all sharing cheap clocks."""
    rng = np.random.default_rng(seed)
    clocks = np.arange(140, dtype=float)
    shared = np.where(clocks % 9 == 4, -0.04, 0.0)
    lines = []
    for _ in range(workloads):
        centre = rng.uniform(50, 90)
        trend = 100 * (1 + 0.00005 * (clocks - centre) ** 2)
        lines.append(trend * (1 + shared + 0.005 * rng.standard_normal(len(clocks))))
    return np.array(lines)


def test_cheap_clocks_every_workload_shares_are_found_in_the_residuals():
    assert shared_share(residuals(synthetic_gpu())) > 0.5
    rng = np.random.default_rng(9)
    independent = 100 * (1 + 0.02 * rng.standard_normal((30, 140)))
    assert shared_share(residuals(independent)) < 0.1


def test_knowing_the_map_finds_the_cheap_clock_a_flat_map_misses():
    lines = synthetic_gpu()
    residual = residuals(lines)
    with_map, probes = map_guided_regrets(lines, residual, 8, 4)
    flat, _ = map_guided_regrets(lines, residual, 8, 4, use_map=False)
    assert probes == 12
    assert np.mean(with_map <= 0.01) > np.mean(flat <= 0.01) + 0.3


def shaped_gpu(workloads=12, dips=False, seed=2):
    """Lines of one GPU: time c + d / f, power a workload's rest plus its activity times the GPU's curve."""
    rng = np.random.default_rng(seed)
    clocks = np.linspace(500.0, 1500.0, 120)
    curve = (clocks / 1500) + 2.5 * np.maximum(0, clocks / 1500 - 0.6) ** 2
    shared = np.where(np.arange(len(clocks)) % 11 == 5, -0.05, 0.0) if dips else 0.0
    lines = {}
    for w in range(workloads):
        times = rng.uniform(0.05, 0.2) + rng.uniform(100, 300) / clocks
        powers = (rng.uniform(40, 60) + rng.uniform(100, 200) * curve) * (1 + shared)
        lines[("gpu", f"w{w}", "877")] = (times, powers)
    return clocks, lines


def test_the_model_fits_a_line_exactly_where_the_gpu_gives_every_workload_its_curve():
    clocks, lines = shaped_gpu()
    fitted = fitted_indices(len(clocks), None)
    shapes = power_shapes({k: p for k, (_, p) in lines.items()})
    for key, (times, powers) in lines.items():
        readings_mape, _, _, at_expected_least = score(clocks, times, powers, shapes[key][0], fitted)
        assert readings_mape < 0.5 and at_expected_least


def test_the_shape_from_the_others_readings_carries_the_gpus_cheap_clocks():
    clocks, lines = shaped_gpu(dips=True)
    fitted = fitted_indices(len(clocks), None)
    shapes = power_shapes({k: p for k, (_, p) in lines.items()})
    for key, (times, powers) in lines.items():
        fine = score(clocks, times, powers, shapes[key][1], fitted)
        trend = score(clocks, times, powers, shapes[key][0], fitted)
        assert fine[2] and fine[0] < 0.1 < 0.5 < trend[0]


def test_the_default_replaces_the_nearest_fitted_setting_but_never_the_top():
    assert fitted_indices(140, None) == [0, 46, 93, 139]
    assert fitted_indices(140, 110) == [0, 46, 110, 139]
    assert fitted_indices(140, 138) == [0, 46, 138, 139]


def test_a_lines_shape_holds_nothing_of_the_line_itself():
    clocks, lines = shaped_gpu()
    powers = {k: p for k, (_, p) in lines.items()}
    key = next(iter(powers))
    before = power_shapes(powers)[key]
    powers[key] = powers[key] * (1 + 0.3 * np.sin(clocks / 50))
    after = power_shapes(powers)[key]
    assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])


def test_a_guided_search_measures_the_three_best_predicted_besides_the_spread():
    clocks = np.arange(100, dtype=float)
    readings = 100 + 0.01 * (clocks - 60) ** 2
    readings[37] = 90
    spread = np.array([0, 33, 66, 99])
    toward_the_dip = readings.copy()
    toward_the_dip[[36, 37, 38]] -= 50
    assert guided_search(readings, toward_the_dip, spread) == (True, False)
    assert not guided_search(readings, 100 + 0.01 * (clocks - 60) ** 2, spread)[0]
