"""The online tuner: find and hold the best GPU setting while a training loop runs.

The same tuner as `dvfslab tune` (docs/tune.md), driven from inside the script:

    gpu = dvfslab.open("0", allow_clock_changes=True)
    with dvfslab.Tuner(gpu, objective="energy", knobs="sm") as tuner:
        for batch in batches:
            with tuner.step(items=len(batch)):
                train_step(batch)
    print(tuner.report()["held"])

Leaving the outer `with` (normally, by an exception, or by Ctrl-C, which stays
Python's KeyboardInterrupt) finishes the tuning and restores the GPU.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from . import _dvfslab


def _knob_text(knobs: Union[str, Iterable[str]]) -> str:
    return knobs if isinstance(knobs, str) else ",".join(knobs)


class Step:
    """One iteration of the loop, opened by Tuner.step(); `items` may be set inside
    the `with` (e.g. once the batch is known)."""

    __slots__ = ("items",)

    def __init__(self, items: Optional[float]):
        self.items = items


class _StepContext:
    __slots__ = ("_tuner", "_step")

    def __init__(self, tuner: "Tuner", items: Optional[float]):
        self._tuner = tuner
        self._step = Step(items)

    def __enter__(self) -> Step:
        self._tuner.step_begin()
        return self._step

    def __exit__(self, exc_type, exc, tb) -> bool:
        # A step that failed did not finish: it is not counted, and the error goes on.
        if exc_type is None:
            self._tuner.step_end(self._step.items)
        return False


class Tuner:
    """The online tuner of `dvfslab tune` on a GPU opened with allow_clock_changes=True.

    objective: an objective of `dvfslab analyze` ("energy", "edp",
        "energy-within-slowdown:10%", ...; dvfslab.objective_help()).
    knobs: the knobs to turn, "sm", "mem", "pl", as "sm,pl" or a list.
    max_slowdown: least energy at most this many % slower than the default (the
        objective energy-within-slowdown:PCT%); leave objective as "energy".
    warmup_iters, probe_iters, settle_iters, strategy, max_retunes, state_dir: as
        --warmup-iters, --probe-iters, --settle-iters, --strategy, --max-retunes,
        --state-dir of `dvfslab tune` (state_dir: DVFSLAB_STATE_DIR, else the default).

    Making it takes the GPU's lock (BusyError if another dvfslab process holds it)
    and refuses a read-only GPU with dvfslab.PermissionError before anything
    changes. Report every iteration: step_begin()/step_end(items), or
    `with tuner.step(items=...)`. finish() (or leaving `with Tuner(...)`) restores
    the GPU and returns the report; so does garbage collection, without the report.
    Use one Tuner from one thread.
    """

    def __init__(self, gpu: _dvfslab.Gpu, objective: str = "energy", knobs: Union[str, Iterable[str]] = "sm", *,
                 max_slowdown: Optional[float] = None, warmup_iters: int = 20, probe_iters: int = 50,
                 settle_iters: int = 1, strategy: str = "online", max_retunes: int = 3,
                 state_dir: Optional[str] = None):
        self._gpu = gpu
        self._report: Optional[Dict[str, Any]] = None
        self._native: Optional[_dvfslab._NativeTuner] = _dvfslab._NativeTuner(
            gpu, _knob_text(knobs), objective, max_slowdown, warmup_iters, probe_iters, settle_iters, strategy,
            max_retunes, "" if state_dir is None else str(state_dir))

    def _tuning(self) -> _dvfslab._NativeTuner:
        if self._native is None:
            raise ValueError("the tuner has finished: no more iterations can be reported")
        return self._native

    @property
    def gpu(self) -> _dvfslab.Gpu:
        return self._gpu

    @property
    def finished(self) -> bool:
        return self._native is None

    def step_begin(self) -> None:
        """Marks the start of an iteration (the first starts the job's measurement).
        After an interrupt restored the GPU, raises dvfslab.InterruptedError."""
        self._tuning().step_begin()

    def step_end(self, items: Optional[float] = None) -> None:
        """One iteration finished, having processed `items` (None: unknown). Between
        windows this changes the GPU's setting."""
        self._tuning().step_end(0.0 if items is None else float(items))

    def add_iterations(self, iterations: int, items: Optional[float] = None) -> None:
        """Several iterations reported at once (as one marker line does)."""
        self._tuning().add_iterations(int(iterations), 0.0 if items is None else float(items))

    def step(self, items: Optional[float] = None) -> _StepContext:
        """`with tuner.step(items=n):` around one iteration: step_begin() on entry,
        step_end(items) on a normal exit; an exception leaves the step uncounted."""
        return _StepContext(self, items)

    @property
    def current_setting(self) -> Dict[str, Any]:
        """The setting the GPU is at now: {"sm_mhz", "mem_mhz", "power_limit_w",
        "label"}, None for a knob left as found (all None after finish())."""
        if self._native is None:
            return {"sm_mhz": None, "mem_mhz": None, "power_limit_w": None,
                    "label": "sm=default mem=default pl=default"}
        return self._native.current_setting()

    def stop_tuning(self) -> None:
        """Back to the state found and no more changes; iterations may still be reported."""
        self._tuning().stop_tuning()

    def finish(self) -> Dict[str, Any]:
        """Closes the last window, restores the GPU and returns the report: the
        document of `dvfslab tune --json` without `job` and `exit`. Once; the report
        stays available from report()."""
        native = self._tuning()
        # Even when restoring fails, this object is done: dropping the native tuner
        # lets its destructor try once more and release the GPU's lock.
        self._native = None
        self._report = native.finish()
        return self._report

    def report(self) -> Dict[str, Any]:
        """The report finish() returned (ValueError while still tuning)."""
        if self._report is None:
            raise ValueError("the tuner is still tuning: the report comes with finish()")
        return self._report

    def __enter__(self) -> "Tuner":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._native is not None:
            self.finish()
        return False

    def __repr__(self) -> str:
        state = "finished" if self._native is None else "at " + self.current_setting["label"]
        return f"<dvfslab.Tuner on {self._gpu.device_spec}: {state}>"
