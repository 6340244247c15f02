"""dvfslab.Tuner: the online tuner from Python. The GPU is restored when the `with`
ends by an exception or by Ctrl-C (which still reaches the script as
KeyboardInterrupt), read-only GPUs are refused before any setter call, and a
tuning on a simulated GPU ends holding a setting with `dvfslab tune --json`'s report."""
import json
import textwrap

import pytest

import dvfslab
from conftest import refused_while_another_thread_is_inside, run_python

# The keys of `dvfslab tune --json` (docs/tune.md) but `job` and `exit`, which name the command.
REPORT_KEYS = {"device", "simulated", "objective", "knobs", "strategy", "iterations", "items", "duration_s",
               "energy_j", "probe_iterations", "probe_energy_j", "retunes", "estimated_default_energy_j",
               "estimated_best_from_start_energy_j", "phases", "probes", "held", "restore_actions",
               "restored_when_stopped", "warnings"}

# A script tuning the fake NVML's first GPU until its SM clock is locked, then
# leaving the `with` by `{leave}`; prints what it saw as JSON.
FAKE_NVML_SCRIPT = """
import json, os, signal, time, dvfslab
gpu = dvfslab.open("0", nvml_library={fake_nvml!r}, allow_clock_changes=True)
state_before = open(os.environ["DVFSLAB_FAKE_NVML_STATE"]).read()
seen = {{"reached_script": None}}
try:
    with dvfslab.Tuner(gpu, knobs="sm", warmup_iters=1, probe_iters=2, settle_iters=0,
                       state_dir={state_dir!r}) as tuner:
        for _ in range(200):
            with tuner.step(items=8):
                time.sleep(0.002)
            if tuner.current_setting["sm_mhz"] is not None:
                seen["locked_sm_mhz"] = tuner.current_setting["sm_mhz"]
                {leave}
except {caught} as error:
    seen["reached_script"] = type(error).__name__
seen["finished"] = tuner.finished
seen["restore_actions"] = tuner.report()["restore_actions"]
seen["state_restored"] = open(os.environ["DVFSLAB_FAKE_NVML_STATE"]).read() == state_before
print(json.dumps(seen))
"""


def run_fake_nvml_script(fake_nvml, tmp_path, leave, caught, salt):
    code = FAKE_NVML_SCRIPT.format(fake_nvml=fake_nvml, state_dir=str(tmp_path / "state"), leave=leave,
                                   caught=caught)
    log = tmp_path / "setters.log"
    env = {"DVFSLAB_FAKE_NVML_GPUS": "v100", "DVFSLAB_FAKE_NVML_LOG": str(log),
           "DVFSLAB_FAKE_NVML_STATE": str(tmp_path / "fake_state.json"), "DVFSLAB_FAKE_NVML_UUID_SALT": salt}
    return run_python(textwrap.dedent(code), env), log


def setter_lines(log):
    return log.read_text().splitlines() if log.exists() else []


def assert_locked_then_restored(result, log):
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    lines = setter_lines(log)
    assert f"nvmlDeviceSetGpuLockedClocks device=0 min_mhz={seen['locked_sm_mhz']} " \
           f"max_mhz={seen['locked_sm_mhz']}" in lines
    assert lines[-1] == "nvmlDeviceResetGpuLockedClocks device=0"
    assert seen["finished"] is True and seen["restore_actions"] and seen["state_restored"] is True
    return seen


def test_an_exception_inside_the_with_restores_the_gpu_and_reaches_the_script(fake_nvml, tmp_path):
    result, log = run_fake_nvml_script(fake_nvml, tmp_path, 'raise RuntimeError("the training step failed")',
                                       "RuntimeError", "python-tuner-exception")
    assert assert_locked_then_restored(result, log)["reached_script"] == "RuntimeError"


def test_ctrl_c_inside_the_loop_reaches_the_script_as_keyboard_interrupt_and_restores_the_gpu(fake_nvml,
                                                                                               tmp_path):
    # Python's own SIGINT handler: the module installs none of its own.
    result, log = run_fake_nvml_script(fake_nvml, tmp_path, "signal.raise_signal(signal.SIGINT)",
                                       "KeyboardInterrupt", "python-tuner-sigint")
    assert assert_locked_then_restored(result, log)["reached_script"] == "KeyboardInterrupt"


def test_read_only_mode_refuses_the_tuner_before_any_setter_call(fake_nvml, tmp_path):
    log = tmp_path / "setters.log"
    code = textwrap.dedent(f"""
        import dvfslab
        gpu = dvfslab.open("0", nvml_library={fake_nvml!r}, allow_clock_changes=True)
        assert gpu.read_only
        try:
            dvfslab.Tuner(gpu, state_dir={str(tmp_path / "state")!r})
        except dvfslab.PermissionError as refused:
            print(refused.exit_code, refused)
    """)
    result = run_python(code, {"DVFSLAB_READ_ONLY": "1", "DVFSLAB_FAKE_NVML_LOG": str(log),
                               "DVFSLAB_FAKE_NVML_UUID_SALT": "python-tuner-read-only"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("5 read-only mode (DVFSLAB_READ_ONLY=1) forbids the clock and power-limit")
    assert setter_lines(log) == []


def test_a_gpu_opened_without_allow_clock_changes_is_refused_with_what_to_do():
    gpu = dvfslab.open("sim:v100", virtual_time=True)
    assert gpu.read_only
    with pytest.raises(dvfslab.PermissionError, match=r"allow_clock_changes=True") as refused:
        dvfslab.Tuner(gpu)
    assert refused.value.exit_code == 5


def test_bad_options_are_refused_like_the_command():
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    with pytest.raises(dvfslab.ConfigError):
        dvfslab.Tuner(gpu, knobs="sm,sm")
    with pytest.raises(dvfslab.UsageError, match="max_slowdown"):
        dvfslab.Tuner(gpu, objective="edp", max_slowdown=10)


def sim_v100_map_with_a_dip(tmp_path, gpu, gpu_name=None):
    """A clock map of `gpu` whose SM clocks are all as their neighbours but 1005 MHz, 10 % cheaper."""
    settings = [{"sm_mhz": mhz, "mem_mhz": 877, "power_limit_w": None, "factor": 0.9 if mhz == 1005 else 1.0}
                for mhz in gpu.clock_table().graphics_mhz[877]]
    path = tmp_path / f"map-{gpu_name or gpu.name}.json"
    path.write_text(json.dumps({"format": "dvfslab-clock-map", "version": 1, "gpu": gpu_name or gpu.name,
                                "lines": 5, "factor_noise": 0.001, "settings": settings}))
    return path


def test_a_clock_map_has_the_tuner_probe_where_it_predicts_a_dip(tmp_path):
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    items = dvfslab.SimGpu.items_per_iteration("resnet50", 64)
    with dvfslab.Tuner(gpu, warmup_iters=5, probe_iters=10, clock_map=sim_v100_map_with_a_dip(tmp_path, gpu)) as tuner:
        for _ in range(400):
            with tuner.step() as step:
                gpu.simulate("resnet50", 64)
                step.items = items
    probed = [probe["setting"]["sm_mhz"] for probe in tuner.report()["probes"]]
    # The default (read for the top clock), 7 more spread over the line and the 3 the map predicts cheapest.
    assert len(probed) == 11 and 1005 in probed and 1380 not in probed


def test_a_clock_map_that_nothing_would_use_or_of_another_gpu_is_refused(tmp_path):
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    own = sim_v100_map_with_a_dip(tmp_path, gpu)
    with pytest.raises(dvfslab.ConfigError, match="online and auto, not golden"):
        dvfslab.Tuner(gpu, strategy="golden", clock_map=own)
    with pytest.raises(dvfslab.ConfigError, match="tune the knob sm"):
        dvfslab.Tuner(gpu, knobs="pl", clock_map=own)
    with pytest.raises(dvfslab.ConfigError, match="not of Tesla V100-PCIE-16GB"):
        dvfslab.Tuner(gpu, clock_map=sim_v100_map_with_a_dip(tmp_path, gpu, "NVIDIA H200"))
    (tmp_path / "model.json").write_text('{"format": "dvfslab-model"}')
    with pytest.raises(dvfslab.ConfigError, match="is not a clock map"):
        dvfslab.Tuner(gpu, clock_map=tmp_path / "model.json")


def test_a_short_tuning_on_a_simulated_gpu_holds_a_setting_and_reports_like_tune_json():
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    assert not gpu.read_only
    items = dvfslab.SimGpu.items_per_iteration("resnet50", 64)
    with dvfslab.Tuner(gpu, objective="energy", knobs=["sm"], warmup_iters=5, probe_iters=10) as tuner:
        for _ in range(400):
            with tuner.step() as step:
                gpu.simulate("resnet50", 64)
                step.items = items
        held = tuner.current_setting
    report = tuner.report()
    assert set(report) == REPORT_KEYS
    assert report["simulated"] is True and report["knobs"] == ["sm"] and report["iterations"] == 400
    assert report["items"] == pytest.approx(400 * items)
    best = report["phases"][0]["best"]
    assert held["sm_mhz"] is not None and best == held
    assert report["held"][-1]["setting"] == held and report["restore_actions"]
    assert report["estimated_best_from_start_energy_j"] < report["estimated_default_energy_j"]
    assert tuner.current_setting["sm_mhz"] is None and tuner.finished
    with pytest.raises(ValueError):
        tuner.step_begin()
    with pytest.raises(ValueError):
        tuner.finish()


@pytest.mark.parametrize("items", [-5, float("nan"), float("inf")], ids=["negative", "nan", "inf"])
def test_l5_tuner_step_end_refuses_negative_nan_and_infinite_items_like_meter_step(items):
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    with dvfslab.Tuner(gpu, warmup_iters=2, probe_iters=2) as tuner:
        tuner.step_begin()
        gpu.simulate("resnet50", 64)
        with pytest.raises(ValueError, match="items must be a finite number of 0 or more"):
            tuner.step_end(items)
        with pytest.raises(ValueError, match="items must be a finite number of 0 or more"):
            tuner.add_iterations(3, items)
        tuner.step_end(64)
    assert tuner.report()["iterations"] == 1 and tuner.report()["items"] == 64
    with dvfslab.Meter(gpu) as meter, pytest.raises(ValueError, match="items must be a finite number of 0 or more"):
        meter.step(items=items)


def test_l5_a_tuner_used_by_two_threads_at_once_raises_dvfslab_error():
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    with dvfslab.Tuner(gpu, warmup_iters=2, probe_iters=2) as tuner:
        raised = refused_while_another_thread_is_inside(tuner, {"step_end", "add_iterations"},
                                                        lambda: tuner.step_end(1), lambda: tuner.step_end(1))
        gpu.simulate("resnet50", 64)
    assert isinstance(raised, dvfslab.Error) and "in use by another thread" in str(raised)
    assert tuner.report()["iterations"] == 1


def test_m4_tuner_add_iterations_past_2_63_is_refused_not_wrapped():
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    with dvfslab.Tuner(gpu, warmup_iters=1, probe_iters=2) as tuner:
        gpu.advance(1.0)
        tuner.add_iterations(2**62)
        gpu.advance(1.0)
        with pytest.raises(ValueError, match=r"past 2\*\*63 - 1: refused rather than wrapped"):
            tuner.add_iterations(2**62)
        with pytest.raises(ValueError, match="iterations must be an integer of 0 or more"):
            tuner.add_iterations(2.5)
    assert tuner.report()["iterations"] == 2**62


def test_first_contact_a_virtual_time_tuner_whose_gpu_never_advances_says_so_after_the_warmup():
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    with pytest.raises(dvfslab.UsageError, match=r"sim:v100 keeps virtual time and none passed during the 5 "
                                                 r"iterations reported.*gpu\.simulate") as refused:
        with dvfslab.Tuner(gpu, warmup_iters=5, probe_iters=10) as tuner:
            for _ in range(400):
                with tuner.step(items=64):
                    pass  # the work a script forgot to simulate
    assert refused.value.exit_code == 2
    assert tuner.finished and tuner.report()["iterations"] == 5


def test_first_contact_a_virtual_time_tuner_finished_before_its_warmup_says_so_too():
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    tuner = dvfslab.Tuner(gpu, warmup_iters=20)
    for _ in range(3):
        tuner.step_end(64)
    with pytest.raises(dvfslab.UsageError, match="none passed during the 3 iterations"):
        tuner.finish()
    assert tuner.finished and tuner.report()["iterations"] == 3
