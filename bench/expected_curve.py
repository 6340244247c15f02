"""The expected value of a measured line, estimated from its own noisy points.

A table that measured each setting once holds one draw per setting: its least
value is partly the luckiest draw. Scoring a search against that draw rewards
luck; scoring against the line's expected value asks whether the search found
where the GPU really uses least. The estimate is a local quadratic regression
(tricube weights over `span` settings on each side), which follows a curve's
knee and valley without assuming a global form.
"""
import numpy as np


def local_quadratic(values, span):
    """Smoothed values of an evenly stepped line, one per input value."""
    values = np.asarray(values, dtype=float)
    count = len(values)
    smoothed = np.empty(count)
    for centre in range(count):
        low, high = max(0, centre - span), min(count, centre + span + 1)
        offsets = np.arange(low, high) - centre
        weights = (1 - (np.abs(offsets) / (span + 1)) ** 3) ** 3
        design = np.vstack([np.ones_like(offsets), offsets, offsets ** 2]).T.astype(float)
        root_weights = np.sqrt(weights)
        coefficients, *_ = np.linalg.lstsq(design * root_weights[:, None],
                                           values[low:high] * root_weights, rcond=None)
        smoothed[centre] = coefficients[0]
    return smoothed


def residual_spread(values, smoothed):
    """Standard deviation of the relative residuals: the line's measurement noise."""
    return float(np.std(np.asarray(values) / smoothed - 1))
