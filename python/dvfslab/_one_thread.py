"""One thread at a time inside a Meter or a Tuner: their bookkeeping (skip
iterations, windows, the tuner's decisions) is not shared between threads, and the
calls release the GIL, so a second thread would race inside the library."""
from __future__ import annotations

import threading
from typing import Any

from . import _dvfslab


class OneThreadAtATime:
    """`with guard:` around each call: a call while another thread is inside one
    raises dvfslab.Error at once (it neither waits nor races)."""

    __slots__ = ("_lock", "_what")

    def __init__(self, what: str):
        self._lock = threading.Lock()
        self._what = what

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            raise _dvfslab.Error(f"this {self._what} is in use by another thread: use a {self._what} from one "
                                 f"thread at a time")

    def __exit__(self, *exc_info: Any) -> None:
        self._lock.release()
