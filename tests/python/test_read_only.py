"""GPUs opened from Python are read-only: no control call exists, and none reaches the driver."""
import json
import textwrap

import pytest

import dvfslab
from conftest import run_python

CONTROL_CALLS = ("lock_sm_clocks", "reset_sm_clocks", "lock_memory_clocks", "reset_memory_clocks",
                 "set_application_clocks", "reset_application_clocks", "set_power_limit", "reset_power_limit",
                 "restore", "set_read_only")


def test_gpu_objects_have_no_control_calls_and_cannot_be_changed():
    gpu = dvfslab.open("sim:a100", virtual_time=True)
    assert gpu.read_only
    for name in CONTROL_CALLS:
        assert not hasattr(gpu, name)
    for target, attribute, value in ((gpu, "read_only", False), (gpu, "name", "x"),
                                     (gpu.identity, "uuid", "x"), (gpu.power_limits(), "current_w", 1.0),
                                     (gpu.telemetry(), "sm_mhz", 1)):
        with pytest.raises(AttributeError):
            setattr(target, attribute, value)
    table = gpu.clock_table()
    table.memory_mhz.append(1)  # a copy: the GPU's table is unchanged
    assert 1 not in gpu.clock_table().memory_mhz


def test_a_simulated_gpu_describes_itself_like_dvfslab_info():
    gpu = dvfslab.open("sim:h200", virtual_time=True)
    described = gpu.describe()
    assert described["name"] == "NVIDIA H200" and described["simulated"] is True
    table = gpu.clock_table()
    assert table.default_graphics_mhz == 1980 and table.memory_mhz[0] == 3201
    assert table.supports(3201, 1980) and len(table.all_graphics_mhz()) > 100
    assert gpu.power_limits().default_w == 700
    assert "h200" in dvfslab.simulated_models()


def test_metering_an_nvml_gpu_makes_no_setter_call(fake_nvml, tmp_path):
    log = tmp_path / "setters.log"
    code = textwrap.dedent(f"""
        import json, time, dvfslab
        gpus = dvfslab.devices(nvml_library={fake_nvml!r})
        gpu = dvfslab.open(gpus[0].uuid)
        meter = dvfslab.Meter(gpu, sample_period_s=0.01)
        with meter.window("w") as w:
            time.sleep(0.05)
            meter.step(items=1)
        meter.close()
        print(json.dumps({{"gpus": len(gpus), "backend": gpu.identity.backend, "read_only": gpu.read_only,
                          "simulated": gpu.simulated, "samples": w.measurement.samples,
                          "limits": gpu.power_limits().to_dict(), "telemetry": gpu.telemetry().to_dict()}}))
    """)
    result = run_python(code, {"DVFSLAB_FAKE_NVML_GPUS": "h200,v100", "DVFSLAB_FAKE_NVML_LOG": str(log),
                               "DVFSLAB_FAKE_NVML_UUID_SALT": "python-read-only"})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["gpus"] == 2 and report["backend"] == "nvml" and report["read_only"] is True
    assert report["simulated"] is False and report["samples"] >= 3
    assert report["limits"]["default"] == 700 and report["telemetry"]["energy_j"] is not None
    assert not log.exists() or log.read_text() == ""
