"""The dense-line scoring tools of bench/ (expected_curve.py, dense_clock_map.py)."""
import numpy as np

from dense_clock_map import map_guided_regrets, residuals, shared_share
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
