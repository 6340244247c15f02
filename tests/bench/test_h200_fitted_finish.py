"""bench/h200_fitted_finish.py: the emulated fitted search on lines whose valley is known."""
import numpy as np

from h200_fitted_finish import emulate, fitted_vertex

CLOCKS = np.arange(345, 1995, 15)


def line_of(energies):
    return {"values": list(CLOCKS), "energies": list(energies)}


def test_the_vertex_of_a_parabola_is_found_and_a_concave_fit_gives_none():
    xs = np.array([10, 20, 30, 40])
    assert fitted_vertex(xs, (xs - 27) ** 2, 10, 40) == 27
    assert fitted_vertex(xs, (xs - 27) ** 2, 10, 25) == 25
    assert fitted_vertex(xs, -(xs - 27) ** 2, 10, 40) is None


def test_a_noiseless_valley_is_found_at_its_vertex_with_the_settings_and_windows_counted():
    chosen, least, settings, windows = emulate(line_of(1 + 2e-7 * (CLOCKS - 1290) ** 2), 6, 2)
    assert abs(CLOCKS[chosen] - 1290) <= 15
    # Without noise the least reading is the fitted vertex, or a setting measured nearer.
    assert abs(CLOCKS[least] - 1290) <= abs(CLOCKS[chosen] - 1290)
    # 6 spread, the vertex and one beside it, and the choice confirmed (one more
    # window, or two where the fit chose a setting not measured yet).
    assert settings in (8, 9)
    assert windows == settings + 1


def test_a_line_falling_to_its_bottom_ends_at_the_bottom():
    chosen, least, _, _ = emulate(line_of(1 + 1e-4 * (CLOCKS - 345)), 5, 1)
    assert chosen == least == 0


def test_one_lucky_reading_is_what_the_least_reading_reports_and_the_fit_is_not_moved_by():
    energies = 1 + 2e-7 * (CLOCKS - 1290) ** 2
    # 8 spread settings bracket 1050-1515 MHz around 1275; the finish measures the
    # vertex and a quarter of the bracket (7 settings) on each side: 1395 MHz reads lucky.
    lucky = int(np.argmin(np.abs(CLOCKS - 1395)))
    energies[lucky] *= 0.995
    chosen, least, _, _ = emulate(line_of(energies), 8, 3)
    assert least == lucky
    assert abs(CLOCKS[chosen] - 1290) <= 30
