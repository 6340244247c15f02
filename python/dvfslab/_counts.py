"""The iterations and items a script reports to a Meter or a Tuner, checked by the
same rules for both and as `dvfslab measure` checks marker lines (docs/measure.md):
items are finite and not negative, iterations whole numbers, and a total that would
pass 2**63 - 1 (the library's counter) is refused rather than wrapped."""
from __future__ import annotations

import math
from typing import Optional

MAX_ITERATIONS = 2**63 - 1


def checked_items(items: Optional[float]) -> float:
    """`items` as the number the library counts (None, unknown: 0); ValueError for a
    negative, NaN or infinite count."""
    if items is None:
        return 0.0
    value = float(items)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"items must be a finite number of 0 or more, not {items!r}")
    return value


def checked_iterations(iterations: int, least: int) -> int:
    """`iterations` if it is an int of at least `least`; ValueError otherwise (a float
    is not silently truncated)."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < least:
        raise ValueError(f"iterations must be an integer of {least} or more, not {iterations!r}")
    return iterations


class ReportedTotal:
    """The iterations and items reported so far to one Meter or Tuner."""

    __slots__ = ("iterations", "items")

    def __init__(self) -> None:
        self.iterations = 0
        self.items = 0.0

    def add(self, iterations: int, items: float) -> None:
        """Counts a report; ValueError, counting nothing, when a total would overflow."""
        if self.iterations + iterations > MAX_ITERATIONS:
            raise ValueError(f"{iterations} more iterations would take the total of {self.iterations} past "
                             f"2**63 - 1: refused rather than wrapped (report iterations, not a running sum)")
        if not math.isfinite(self.items + items):
            raise ValueError(f"{items!r} more items would take the total of {self.items!r} past the largest "
                             f"number: refused")
        self.iterations += iterations
        self.items += items
