"""SIGTERM and SIGHUP while a Tuner holds a changed GPU (docs/python.md, "Signals").

They are how batch systems stop a job (Slurm's time limit and scancel, timeout,
systemd, Kubernetes), and their default action kills the interpreter without
running any `with` or `finally`, which would leave the GPU changed. So while a
Tuner holds a changed GPU, a Python handler first restores the GPU and then gives
the signal the action it had before: it calls the previous Python handler, or, for
the default action, delivers the signal again, so the process still dies by it
(exit status 128 + N). SIGINT stays Python's own (KeyboardInterrupt, which the
`with` handles). Python handlers are the host's own mechanism: the library's
signal thread (InterruptScope) would take SIGINT from Python and keep the
signal from the script's handlers, which the host must keep.
"""
from __future__ import annotations

import os
import signal
import threading
import weakref
from types import FrameType
from typing import Any, Callable, Dict, Optional

HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class RestoreOnSignals:
    """Handlers for HANDLED_SIGNALS that call `restore(signal_name)`, then chain.

    install() and uninstall() act on the main thread only (the only one Python lets
    set handlers); elsewhere they do nothing, and the journal remains (`dvfslab
    restore`). A forked child (a data-loader worker) restores nothing: the GPU is
    its parent's."""

    def __init__(self, restore: Callable[[str], None]):
        # Weak: a handler must not keep the Tuner alive, whose destructor restores too.
        self._restore = weakref.WeakMethod(restore)
        self._previous: Dict[int, Any] = {}
        self._owner_pid = os.getpid()

    @property
    def installed(self) -> bool:
        return bool(self._previous)

    def install(self) -> None:
        if self._previous or threading.current_thread() is not threading.main_thread():
            return
        for number in HANDLED_SIGNALS:
            previous = signal.getsignal(number)
            # An ignored signal stops nothing; a handler set outside Python (None)
            # cannot be called from here, so it is left alone.
            if previous is signal.SIG_IGN or previous is None:
                continue
            signal.signal(number, self._handle)
            self._previous[number] = previous

    def uninstall(self) -> None:
        """Puts back the handlers found, where ours is still the one installed."""
        if not self._previous or threading.current_thread() is not threading.main_thread():
            return
        for number, previous in self._previous.items():
            if signal.getsignal(number) == self._handle:
                signal.signal(number, previous)
        self._previous.clear()

    def _handle(self, number: int, frame: Optional[FrameType]) -> None:
        previous = self._previous.get(number, signal.SIG_DFL)
        restore = self._restore()
        if restore is not None and os.getpid() == self._owner_pid:
            restore(signal.Signals(number).name)
        self.uninstall()
        if callable(previous):
            previous(number, frame)
            return
        os.kill(os.getpid(), number)  # the default action, now back: dies by the signal
