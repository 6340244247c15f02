"""The energy meter: named windows and per-step measurements of a job's GPUs.

The meter samples the GPU from the moment it is made (on its own thread for a
real GPU or a wall-time simulated one) until close(). Every measurement has the
fields of `dvfslab measure --json` (docs/measure.md, "JSON contract").
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from . import _dvfslab
from ._counts import ReportedTotal, checked_items, checked_iterations
from ._one_thread import OneThreadAtATime

_RESERVED_PREFIX = "dvfslab."

# An explicit sampling period: from the meter's own fastest derived period (5 ms;
# no sensor refreshes faster, so faster only costs CPU) to the 60 s that
# `measure --sample-ms` accepts.
MIN_SAMPLE_PERIOD_S = 0.005
MAX_SAMPLE_PERIOD_S = 60.0

_FIELDS = (
    "name", "duration_s", "energy_j", "energy_error_j", "energy_integrated_j", "energy_difference_pct",
    "mean_power_w", "peak_power_w", "idle_power_w", "dynamic_energy_j", "sm_mhz_mean", "sm_mhz_min",
    "mem_mhz_mean", "busy_fraction", "sm_mhz_busy_mean", "mem_mhz_busy_mean", "temperature_c_min",
    "temperature_c_max", "samples", "time_per_iteration_s", "items_per_s", "energy_per_iteration_j",
    "energy_per_item_j",
)


class Measurement:
    """One measured window. Attributes are the keys of `dvfslab measure --json`;
    a value the GPU could not give is None (the JSON leaves it out), `throttle`
    maps reason -> fraction of the window, `flags` lists validity flags
    (short_window, energy_estimated, clock_mismatch, power_throttle,
    thermal_throttle). `to_dict()` gives the JSON object itself."""

    __slots__ = ("_data",)

    # Declared for readers and type checkers; the values come from __getattr__.
    name: str
    duration_s: float
    samples: int
    energy_j: Optional[float]
    energy_error_j: Optional[float]
    energy_integrated_j: Optional[float]
    energy_difference_pct: Optional[float]
    mean_power_w: Optional[float]
    peak_power_w: Optional[float]
    idle_power_w: Optional[float]
    dynamic_energy_j: Optional[float]
    sm_mhz_mean: Optional[float]
    sm_mhz_min: Optional[int]
    mem_mhz_mean: Optional[float]
    busy_fraction: Optional[float]
    sm_mhz_busy_mean: Optional[float]
    mem_mhz_busy_mean: Optional[float]
    temperature_c_min: Optional[float]
    temperature_c_max: Optional[float]
    time_per_iteration_s: Optional[float]
    items_per_s: Optional[float]
    energy_per_iteration_j: Optional[float]
    energy_per_item_j: Optional[float]

    def __init__(self, data: Dict[str, Any]):
        self._data = data

    def __getattr__(self, key: str) -> Any:
        if key in _FIELDS:
            return self._data.get(key)
        raise AttributeError(f"Measurement has no attribute {key!r}")

    def __setattr__(self, key: str, value: Any) -> None:
        if key != "_data":
            raise AttributeError("a Measurement is read-only")
        object.__setattr__(self, key, value)

    @property
    def iterations(self) -> int:
        return self._data.get("iterations", 0)

    @property
    def items(self) -> float:
        return self._data.get("items", 0.0)

    @property
    def throttle(self) -> Dict[str, float]:
        return dict(self._data.get("throttle", {}))

    @property
    def flags(self) -> List[str]:
        return list(self._data.get("flags", []))

    @property
    def simulated(self) -> bool:
        return bool(self._data.get("simulated", False))

    @property
    def gpus(self) -> List["Measurement"]:
        """Each GPU's share when the meter reads several (the attributes above are
        then their totals); empty for one GPU. Each has uuid, index and gpu_name."""
        return [Measurement(gpu) for gpu in self._data.get("gpus", [])]

    @property
    def uuid(self) -> Optional[str]:
        return self._data.get("uuid")

    @property
    def index(self) -> Optional[int]:
        return self._data.get("index")

    def to_dict(self) -> Dict[str, Any]:
        return dict(self._data)

    def __repr__(self) -> str:
        energy = "n/a" if self.energy_j is None else f"{self.energy_j:.3f} J"
        power = "n/a" if self.mean_power_w is None else f"{self.mean_power_w:.1f} W"
        flags = f" [{', '.join(self.flags)}]" if self.flags else ""
        simulated = " SIMULATED" if self.simulated else ""
        return (f"<Measurement {self.name!r}: {self.duration_s:.4f} s, {energy}, {power}, "
                f"{self.iterations} iterations{flags}{simulated}>")


class Window:
    """A named window as a context manager (`with meter.window("train") as w:`).
    After the `with`, `w.measurement` holds what was measured (also when the block
    raised); None if it never opened (fewer steps than skip_iterations)."""

    def __init__(self, meter: "Meter", name: str, skip_iterations: int):
        self._meter = meter
        self.name = name
        self.skip_iterations = skip_iterations
        self.measurement: Optional[Measurement] = None

    def __enter__(self) -> "Window":
        self._meter.begin(self.name, skip_iterations=self.skip_iterations)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.measurement = self._meter._end_if_open(self.name)


class Meter:
    """Measures energy, power and clocks of `gpu` in windows: a dvfslab.Gpu, or a
    list of them for a job on several GPUs (dvfslab.open_all("all"); simulated ones
    from one spec such as "sim:h200x2", which share a clock). With several, each
    measurement holds the job's totals and each GPU's share in `gpus`.

    sample_period_s: sampling period, from 0.005 to 60 s (default: half the
        sensor's update period, within 5 to 500 ms).
    idle_seconds: measure idle power first; measurements then add idle_power_w
        and dynamic_energy_j.
    keep_trace: keep every reading for trace() / write_trace().

    Use it as a context manager, or call close() when done. Use a Meter from one
    thread at a time: another thread's call meanwhile raises dvfslab.Error."""

    def __init__(self, gpu: Union[_dvfslab.Gpu, Sequence[_dvfslab.Gpu]], *,
                 sample_period_s: Optional[float] = None, idle_seconds: float = 0.0, keep_trace: bool = False):
        if sample_period_s is not None and not MIN_SAMPLE_PERIOD_S <= sample_period_s <= MAX_SAMPLE_PERIOD_S:
            raise ValueError(f"sample_period_s must be from {MIN_SAMPLE_PERIOD_S} to {MAX_SAMPLE_PERIOD_S} s, "
                             f"not {sample_period_s!r}")
        if not 0 <= idle_seconds <= 3600:
            raise ValueError("idle_seconds must be from 0 to 3600")
        gpus = [gpu] if isinstance(gpu, _dvfslab.Gpu) else list(gpu)
        if not gpus or not all(isinstance(one, _dvfslab.Gpu) for one in gpus):
            raise TypeError("Meter takes a dvfslab.Gpu or a non-empty list of them")
        self.gpu = gpus[0]
        self.gpus = gpus  # held here: the native meter reads them until close()
        self._native: Optional[Any] = _dvfslab._NativeMeter(gpus, sample_period_s, float(idle_seconds),
                                                            bool(keep_trace))
        self._simulated = self._native.simulated
        self._waiting: Dict[str, int] = {}  # window -> iterations still to skip
        self._reported = ReportedTotal()
        self._one_thread = OneThreadAtATime("Meter")

    # -- windows

    def window(self, name: str, *, skip_iterations: int = 0) -> Window:
        """A window around a `with` block. With skip_iterations=N it opens after N
        further iterations have been counted by step(): the steady-state window
        that leaves warm-up out (measure's --skip-iters)."""
        return Window(self, name, skip_iterations)

    def begin(self, name: str, *, skip_iterations: int = 0) -> None:
        """Opens window `name` (names of open windows are unique; windows may
        nest or overlap). It also restarts the step window, so the next step()
        counts from here."""
        if not isinstance(name, str) or not name or name.startswith(_RESERVED_PREFIX):
            raise ValueError(f"window name {name!r}: give a non-empty name not starting with 'dvfslab.'")
        if not isinstance(skip_iterations, int) or skip_iterations < 0:
            raise ValueError("skip_iterations must be an integer of 0 or more")
        with self._one_thread:
            native = self._require_open()
            if native.is_open(name) or name in self._waiting:
                raise ValueError(f"window {name!r} is already open")
            if skip_iterations > 0:
                self._waiting[name] = skip_iterations
                return
            native.begin(name, 0)
            native.restart_step()

    def end(self, name: str) -> Measurement:
        """Closes window `name` and returns its measurement."""
        measurement = self._end_if_open(name)
        if measurement is None:
            raise ValueError(f"window {name!r} is not open")
        return measurement

    def _end_if_open(self, name: str) -> Optional[Measurement]:
        with self._one_thread:
            native = self._require_open()
            if self._waiting.pop(name, None) is not None or not native.is_open(name):
                return None
            return self._measurement(native.end(name))

    def open_windows(self) -> List[str]:
        """Open windows, oldest first (not those still skipping warm-up)."""
        return [name for name in self._require_open().open_windows() if not name.startswith(_RESERVED_PREFIX)]

    # -- steps

    def step(self, items: Optional[float] = None, *, iterations: int = 1) -> Measurement:
        """Counts `iterations` finished iterations (and the items they processed)
        in every open window and returns the measurement of this step: from the
        previous step() (or the latest begin(), or the meter's start) to now. Steps
        are back to back; a step shorter than two sensor periods is flagged
        short_window, and its energy is an estimate whose energy_error_j rests only on
        the energy counter's updates and the GPU's largest power limit: a step of a
        few milliseconds often reads "between 0 and its duration at that limit".

        A step's boundary does not read the GPU: it is the meter's latest sample
        (one every sample_period_s) held to now, so the call costs
        microseconds, not an NVML read. Its energy is the energy counter
        extrapolated with the latest power; energy_error_j covers the update
        instants and, past the first sensor update the sample may have missed,
        any power from none to twice the latest. Windows read the GPU at their ends.

        On a GPU, finish the step's work before calling it (e.g. a loss.item()
        or torch.cuda.synchronize()), or the step measures the launch, not the work.

        items: None (unknown) or a finite number of 0 or more; a total of
        iterations past 2**63 - 1 is refused (ValueError), not wrapped."""
        counted_iterations = checked_iterations(iterations, least=1)
        counted_items = checked_items(items)
        with self._one_thread:
            native = self._require_open()
            self._reported.add(counted_iterations, counted_items)
            data = native.step(counted_iterations, counted_items)
            data["name"] = "step"
            measurement = self._measurement(data)
            if self._waiting:
                self._count_warmup(native, counted_iterations)
            return measurement

    def _count_warmup(self, native: Any, iterations: int) -> None:
        for name in list(self._waiting):
            self._waiting[name] -= iterations
            if self._waiting[name] <= 0:
                del self._waiting[name]
                native.begin(name, 0)

    # -- the meter itself

    @property
    def sample_period_s(self) -> float:
        return self._require_open().sample_period_s

    @property
    def sensor_period_s(self) -> float:
        """The sensor update period the short-window rule uses."""
        return self._require_open().sensor_period_s

    @property
    def idle_power_w(self) -> Optional[float]:
        return self._require_open().idle_power_w

    @property
    def simulated(self) -> bool:
        return self._simulated

    def trace(self) -> List[Dict[str, Any]]:
        """Every reading so far (with keep_trace=True), as `dvfslab measure --trace FILE.json` writes them."""
        return self._require_open().trace()

    def write_trace(self, path: str) -> None:
        """Writes the trace as CSV or JSON, chosen by the extension (.csv / .json)."""
        self._require_open().write_trace(str(path))

    def close(self) -> None:
        """Stops sampling; windows still open are dropped. Safe to call twice."""
        with self._one_thread:
            if self._native is not None:
                self._native.stop()
                self._native = None

    def __enter__(self) -> "Meter":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def _require_open(self) -> Any:
        if self._native is None:
            raise ValueError("this Meter is closed")
        return self._native

    def _measurement(self, data: Dict[str, Any]) -> Measurement:
        data["simulated"] = self._simulated
        return Measurement(data)
