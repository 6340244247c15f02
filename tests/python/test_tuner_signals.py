"""C1: SIGTERM and SIGHUP (how Slurm, timeout, systemd and Kubernetes stop a job)
restore the GPU a dvfslab.Tuner changed, inside and outside `with`, and then act as
they did before: the process dies by the signal where its action was the default,
and a handler the script had is still called. Handlers are installed only while the
GPU is changed, and put back after. The fake NVML's GPU starts at a power limit of
450 W (700 W is its default), so a restore to the state found and a reset to the
defaults end differently."""
import json
import os
import signal
import subprocess
import sys
import threading

import pytest

import dvfslab
from conftest import run_python

# Sets the fake GPU's power limit as an administrator would, before the job.
PRESET_POWER_LIMIT = """
import ctypes, sys
nvml = ctypes.CDLL(sys.argv[1])
device = ctypes.c_void_p()
assert nvml.nvmlInit_v2() == 0
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(device)) == 0
assert nvml.nvmlDeviceSetPowerManagementLimit(device, 450000) == 0
assert nvml.nvmlShutdown() == 0
"""

# A training loop tuning `knobs` that runs until it is stopped; says "changed" once
# the GPU is. argv: state dir, knobs, "with" or "bare", and what the script does
# with SIGTERM first: "default" or "handler" (its own, which exits 7).
TRAINING_LOOP = """
import os, signal, sys, time, dvfslab
state_dir, knobs, form, own = sys.argv[1:]
if own == "handler":
    def stop_cleanly(number, frame):
        print("own handler", signal.Signals(number).name, flush=True)
        sys.exit(7)
    signal.signal(signal.SIGTERM, stop_cleanly)
gpu = dvfslab.open("0", nvml_library=os.environ["DVFSLAB_FAKE_NVML"], allow_clock_changes=True)
tuner = dvfslab.Tuner(gpu, knobs=knobs, warmup_iters=1, probe_iters=2, settle_iters=0, state_dir=state_dir)

def train():
    announced = False
    while True:
        with tuner.step(items=8):
            time.sleep(0.002)
        setting = tuner.current_setting
        if not announced and (setting["sm_mhz"] is not None or setting["power_limit_w"] is not None):
            print("changed", flush=True)
            announced = True

if form == "with":
    with tuner:
        train()
else:
    train()
"""


def fake_environment(fake_nvml, tmp_path, salt):
    return {"DVFSLAB_FAKE_NVML": fake_nvml, "DVFSLAB_FAKE_NVML_GPUS": "h200",
            "DVFSLAB_FAKE_NVML_LOG": str(tmp_path / "setters.log"),
            "DVFSLAB_FAKE_NVML_STATE": str(tmp_path / "fake_state.json"), "DVFSLAB_FAKE_NVML_UUID_SALT": salt}


def journals(state_dir):
    return sorted(path.name for path in state_dir.glob("journal-*"))


# The setter call that puts each knob back as found, the last of the log.
RESTORING_CALL = {"sm": "nvmlDeviceResetGpuLockedClocks device=0",
                  "pl": "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=450000"}


def stop_the_job_once_changed(fake_nvml, tmp_path, signal_number, knobs, form, own="default"):
    """Presets 450 W, runs TRAINING_LOOP until the GPU is changed, sends the signal;
    returns (state before, the finished process, its stdout, its stderr)."""
    env = fake_environment(fake_nvml, tmp_path, f"python-c1-{signal_number}-{knobs}-{form}-{own}")
    preset = run_python(["-c", PRESET_POWER_LIMIT, fake_nvml], env)
    assert preset.returncode == 0, preset.stderr
    state_file = tmp_path / "fake_state.json"
    before = state_file.read_text()
    assert json.loads(before)["devices"][0]["controls"]["power_limit_w"] == 450.0
    state_dir = tmp_path / "state"
    job = subprocess.Popen([sys.executable, "-c", TRAINING_LOOP, str(state_dir), knobs, form, own],
                           env={**os.environ, **env}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        announced = job.stdout.readline()
        assert announced == "changed\n", job.stderr.read() if announced == "" else announced
        assert state_file.read_text() != before and journals(state_dir), "the GPU was not changed"
        job.send_signal(signal_number)
        stdout, stderr = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    return before, job, stdout, stderr


def assert_restored_as_found(tmp_path, knobs, before, stderr):
    assert (tmp_path / "fake_state.json").read_text() == before, stderr
    assert journals(tmp_path / "state") == []
    assert (tmp_path / "setters.log").read_text().splitlines()[-1] == RESTORING_CALL[knobs]


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("form", ["with", "bare"])
@pytest.mark.parametrize("knobs", ["sm", "pl"])
def test_c1_tuner_restores_on_sigterm_and_sighup_then_dies_by_the_signal(fake_nvml, tmp_path, signal_number,
                                                                         form, knobs):
    before, job, _, stderr = stop_the_job_once_changed(fake_nvml, tmp_path, signal_number, knobs, form)
    # Died by the signal, as without dvfslab: a shell reports 128 + N (143, 129).
    assert job.returncode == -signal_number, stderr
    assert_restored_as_found(tmp_path, knobs, before, stderr)
    name = signal.Signals(signal_number).name
    assert f"dvfslab: {name}: restored NVIDIA H200 as found and stopped tuning" in stderr


def test_c1_the_scripts_own_sigterm_handler_still_runs_after_the_restore(fake_nvml, tmp_path):
    before, job, stdout, stderr = stop_the_job_once_changed(fake_nvml, tmp_path, signal.SIGTERM, "sm", "with",
                                                            own="handler")
    assert job.returncode == 7, stderr
    assert stdout == "own handler SIGTERM\n"
    assert_restored_as_found(tmp_path, "sm", before, stderr)


def test_c1_handlers_are_installed_only_while_the_gpu_is_changed_and_put_back_after():
    def own_handler(number, frame):
        raise AssertionError("not called in this test")

    previous_term = signal.signal(signal.SIGTERM, own_handler)
    previous_hup = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
        tuner = dvfslab.Tuner(gpu, warmup_iters=2, probe_iters=2, settle_iters=0)
        steps_at_found_state = 0
        while tuner.current_setting["sm_mhz"] is None:
            assert signal.getsignal(signal.SIGTERM) is own_handler
            with tuner.step():
                gpu.simulate("resnet50", 64)
            steps_at_found_state += 1
        assert steps_at_found_state >= 2
        assert signal.getsignal(signal.SIGTERM) not in (own_handler, signal.SIG_DFL)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN  # an ignored signal stays ignored
        tuner.finish()
        assert signal.getsignal(signal.SIGTERM) is own_handler
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        signal.signal(signal.SIGHUP, previous_hup)


def test_c1_a_tuner_on_another_thread_installs_no_handler():
    # Python lets only the main thread set handlers; such a tuner relies on its journal.
    gpu = dvfslab.open("sim:v100", virtual_time=True, allow_clock_changes=True)
    handler_before = signal.getsignal(signal.SIGTERM)
    seen = {}

    def tune():
        with dvfslab.Tuner(gpu, warmup_iters=1, probe_iters=2, settle_iters=0) as tuner:
            while tuner.current_setting["sm_mhz"] is None:
                with tuner.step():
                    gpu.simulate("resnet50", 64)
            seen["handler_while_changed"] = signal.getsignal(signal.SIGTERM)

    worker = threading.Thread(target=tune)
    worker.start()
    worker.join()
    assert seen["handler_while_changed"] is handler_before

