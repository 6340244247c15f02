"""The online tuner: find and hold the best GPU setting while a training loop runs.

The same tuner as `dvfslab tune` (docs/tune.md), driven from inside the script:

    gpu = dvfslab.open("0", allow_clock_changes=True)
    with dvfslab.Tuner(gpu, objective="energy", knobs="sm") as tuner:
        for batch in batches:
            with tuner.step(items=len(batch)):
                train_step(batch)
    print(tuner.report()["held"])

Leaving the outer `with` (normally, by an exception, or by Ctrl-C, which stays
Python's KeyboardInterrupt) finishes the tuning and restores the GPU; SIGTERM and
SIGHUP restore it too, inside or outside the `with` (_signals.py).
"""
from __future__ import annotations

import sys
import weakref
from typing import Any, Dict, Iterable, Optional, Union

from . import _dvfslab
from ._counts import ReportedTotal, checked_items, checked_iterations
from ._one_thread import OneThreadAtATime
from ._ranks import RankAgreement, initialized_process_group
from ._signals import RestoreOnSignals


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
        --state-dir of `dvfslab tune` (state_dir: DVFSLAB_STATE_DIR, else the default;
        probe_iters None: windows of 50 iterations that also last ten sensor periods).
    clock_map: the path of a clock map of this GPU model (`dvfslab clock-map`), as
        --clock-map of `dvfslab tune`: where it shows the SM clocks' line rough, every
        SM clock from 40 % of the top is a candidate and the line is probed where the
        map predicts its dips.

    Making it takes the GPU's lock (BusyError if another dvfslab process holds it)
    and refuses a read-only GPU with dvfslab.PermissionError before anything
    changes. Report every iteration: step_begin()/step_end(items), or
    `with tuner.step(items=...)`. finish() (or leaving `with Tuner(...)`) restores
    the GPU and returns the report; so does garbage collection, without the report.
    While the GPU is changed, SIGTERM and SIGHUP restore it, then act as before
    (docs/python.md, "Signals"). Use a Tuner from one thread at a time (another
    thread's call meanwhile raises dvfslab.Error). On a virtual-time simulated GPU,
    iterations in which no simulated time passed raise dvfslab.UsageError.

    Under torch.distributed (a process group of more than one rank initialised
    before the Tuner is made) every rank makes a Tuner on its own GPU and the ranks
    agree: rank 0 decides each window and broadcasts it, so every rank changes its
    GPU, and only its GPU, at the same step to the same setting; the windows'
    figures are the job's (energy and items summed over the ranks, the slowest
    rank's time). Every rank must report the same number of steps, and make its
    calls at the same points, as for any collective (docs/multi-gpu.md).
    distributed=False tunes this rank's GPU on its own.
    """

    def __init__(self, gpu: _dvfslab.Gpu, objective: str = "energy", knobs: Union[str, Iterable[str]] = "sm", *,
                 max_slowdown: Optional[float] = None, warmup_iters: int = 20, probe_iters: Optional[int] = None,
                 settle_iters: int = 1, strategy: str = "online", max_retunes: int = 3,
                 state_dir: Optional[str] = None, clock_map: Optional[str] = None,
                 distributed: Optional[bool] = None):
        self._gpu = gpu
        self._report: Optional[Dict[str, Any]] = None
        self._reported = ReportedTotal()
        self._one_thread = OneThreadAtATime("Tuner")
        self._warmup_iterations = warmup_iters
        # A virtual-time GPU's clock moves only when the script runs simulated work
        # on it: without that, every window the tuner measures is empty.
        self._virtual_clock_start: Optional[float] = (
            gpu.now_s if isinstance(gpu, _dvfslab.SimGpu) and gpu.virtual_time else None)
        process_group = initialized_process_group() if distributed is not False else None
        if distributed and process_group is None:
            raise _dvfslab.UsageError("distributed=True needs torch.distributed initialised with more than one rank")
        self._ranks: Optional[RankAgreement] = None if process_group is None else RankAgreement(process_group)
        self._native: Optional[_dvfslab._NativeTuner] = _dvfslab._NativeTuner(
            gpu, _knob_text(knobs), objective, max_slowdown, warmup_iters, probe_iters, settle_iters, strategy,
            max_retunes, "" if state_dir is None else str(state_dir),
            clock_map=None if clock_map is None else str(clock_map),
            job_figures=None if self._ranks is None else self._ranks.job_figures,
            agreed_window=None if self._ranks is None else self._ranks.agreed_window)
        self._signals = RestoreOnSignals(self._restore_on_signal)
        weakref.finalize(self, self._signals.uninstall)

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
        with self._one_thread:
            self._tuning().step_begin()

    def step_end(self, items: Optional[float] = None) -> None:
        """One iteration finished, having processed `items` (None: unknown; else a
        finite number of 0 or more, as Meter.step takes). Between windows this
        changes the GPU's setting."""
        self.add_iterations(1, items)

    def add_iterations(self, iterations: int, items: Optional[float] = None) -> None:
        """Several iterations (an int of 0 or more) reported at once, as one marker
        line does; a total past 2**63 - 1 is refused (ValueError), not wrapped."""
        counted_iterations = checked_iterations(iterations, least=0)
        counted_items = checked_items(items)
        with self._one_thread:
            native = self._tuning()
            self._reported.add(counted_iterations, counted_items)
            native.add_iterations(counted_iterations, counted_items)
            if not self._signals.installed and native.changed:
                self._signals.install()
            self._require_time_passed(least_iterations=max(1, self._warmup_iterations))

    def _require_time_passed(self, least_iterations: int) -> None:
        """Once `least_iterations` were reported on a virtual-time GPU: UsageError if
        its clock has not moved since the tuner started (checked once)."""
        start = self._virtual_clock_start
        if start is None or self._reported.iterations < least_iterations:
            return
        self._virtual_clock_start = None
        if self._gpu.now_s == start:
            raise _dvfslab.UsageError(
                f"{self._gpu.device_spec} keeps virtual time and none passed during the {self._reported.iterations} "
                f"iterations reported, so the tuner measured nothing: run each step's work on it "
                f"(gpu.simulate(...), or gpu.advance(seconds) with a load attached), or open it without "
                f"virtual_time=True to follow the wall clock")

    def step(self, items: Optional[float] = None) -> _StepContext:
        """`with tuner.step(items=n):` around one iteration: step_begin() on entry,
        step_end(items) on a normal exit; an exception leaves the step uncounted."""
        return _StepContext(self, items)

    @property
    def current_setting(self) -> Dict[str, Any]:
        """The setting the GPU is at now: {"sm_mhz", "mem_mhz", "power_limit_w",
        "workload_profile", "label"}, None for a knob left as found (all None after
        finish())."""
        with self._one_thread:
            if self._native is None:
                return {"sm_mhz": None, "mem_mhz": None, "power_limit_w": None, "workload_profile": None,
                        "label": "sm=default mem=default pl=default"}
            return self._native.current_setting()

    def stop_tuning(self) -> None:
        """Back to the state found and no more changes; iterations may still be reported."""
        with self._one_thread:
            self._tuning().stop_tuning()
            self._signals.uninstall()

    def finish(self) -> Dict[str, Any]:
        """Closes the last window, restores the GPU and returns the report: the
        document of `dvfslab tune --json` without `job` and `exit`. Once; the report
        stays available from report()."""
        report = self._finish()
        self._require_time_passed(least_iterations=1)
        return report

    def _finish(self) -> Dict[str, Any]:
        with self._one_thread:
            native = self._tuning()
            try:
                self._report = native.finish()
            finally:
                # Even when restoring fails, this object is done: dropping the native
                # tuner lets its destructor try once more and release the GPU's lock.
                self._native = None
                self._signals.uninstall()
            return self._report

    def _restore_on_signal(self, signal_name: str) -> None:
        # Runs on the main thread between two of the script's bytecodes, so never
        # inside a call of this tuner's: the native tuner is free to restore.
        native = self._native
        if native is None:
            return
        try:
            native.stop_tuning()
        except _dvfslab.Error as error:
            print(f"dvfslab: error: on {signal_name}: {error}", file=sys.stderr)
            return
        print(f"dvfslab: {signal_name}: restored {self._gpu.name} as found and stopped tuning", file=sys.stderr)

    def report(self) -> Dict[str, Any]:
        """The report finish() returned (ValueError while still tuning)."""
        if self._report is None:
            raise ValueError("the tuner is still tuning: the report comes with finish()")
        return self._report

    def __enter__(self) -> "Tuner":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._native is None:
            return False
        if exc_type is None:
            self.finish()
        else:
            self._finish()  # the error on its way out is the one to see, not a check on the run it cut short
        return False

    def __repr__(self) -> str:
        state = "finished" if self._native is None else "at " + self.current_setting["label"]
        return f"<dvfslab.Tuner on {self._gpu.device_spec}: {state}>"
