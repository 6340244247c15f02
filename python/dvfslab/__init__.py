"""dvfslab from Python: GPUs, the energy meter, the online tuner, the marker protocol
and results.

    import dvfslab
    gpu = dvfslab.open("sim:h200")            # or "auto", "0", a UUID; read-only
    meter = dvfslab.Meter(gpu)
    with meter.window("train") as train:
        for batch in batches:
            train_step(batch)
            step = meter.step(items=len(batch))
    print(train.measurement.energy_j)

    gpu = dvfslab.open("0", allow_clock_changes=True)
    with dvfslab.Tuner(gpu, objective="energy", knobs="sm") as tuner:
        for batch in batches:
            with tuner.step(items=len(batch)):
                train_step(batch)
    print(tuner.report()["held"])

docs/python.md describes the API and how it maps to the dvfslab command.
"""
from . import markers
from ._dvfslab import (
    BusyError,
    ClockTable,
    CommandStartError,
    ConfigError,
    DriverNotFoundError,
    Error,
    Gpu,
    GpuIdentity,
    GpuLostError,
    InterruptedError,
    NotSupportedError,
    PermissionError,
    PowerLimits,
    SimGpu,
    StoreError,
    Telemetry,
    UsageError,
    __version__,
    device_spec_help,
    devices,
    objective_help,
    open,
    open_all,
    simulated_models,
)
from .meter import Measurement, Meter, Window
from .results import Record, Results, results
from .tuner import Step, Tuner

# PermissionError and InterruptedError are left out: `from dvfslab import *` must
# not hide the built-in classes of the same names (use dvfslab.PermissionError).
__all__ = [
    "BusyError", "ClockTable", "CommandStartError", "ConfigError", "DriverNotFoundError", "Error", "Gpu",
    "GpuIdentity", "GpuLostError", "Measurement", "Meter", "NotSupportedError", "PowerLimits", "Record",
    "Results", "SimGpu", "Step", "StoreError", "Telemetry", "Tuner", "UsageError", "Window", "__version__", "device_spec_help",
    "devices", "markers", "objective_help", "open", "open_all", "results", "simulated_models",
]
