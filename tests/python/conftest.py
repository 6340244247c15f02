"""Shared fixtures of the Python suite. ctest (tests/python/CMakeLists.txt) runs each
file with the build tree's package on PYTHONPATH and these paths in the environment."""
import os
import subprocess
import sys
import threading

import pytest


def _path_from_environment(name):
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set (run the suite through ctest)")
    return value


@pytest.fixture
def dvfslab_binary():
    return _path_from_environment("DVFSLAB_BINARY")


@pytest.fixture
def fake_nvml():
    return _path_from_environment("DVFSLAB_FAKE_NVML")


@pytest.fixture
def source_dir():
    return _path_from_environment("DVFSLAB_SOURCE_DIR")


def run_python(code_or_args, env_updates=None, timeout=60):
    """Runs this interpreter on a script (list: arguments) or code (str) with the
    suite's environment plus `env_updates`; returns the CompletedProcess."""
    env = dict(os.environ)
    env.update(env_updates or {})
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=timeout)


class HeldCall:
    """Stands in for a native tuner or meter, passing every call through, except that
    the calls named `held` wait inside until released: another thread's long call,
    held open without timing."""

    def __init__(self, native, held):
        self._native = native
        self._held = held
        self.inside = threading.Event()
        self.release = threading.Event()

    def __getattr__(self, name):
        call = getattr(self._native, name)
        if name not in self._held:
            return call

        def held_call(*args):
            self.inside.set()
            self.release.wait(timeout=10)
            return call(*args)

        return held_call


def refused_while_another_thread_is_inside(owner, held, first_call, second_call):
    """Runs first_call on a thread and holds it inside the native object; returns what
    second_call on this thread raised meanwhile (None if nothing)."""
    holder = HeldCall(owner._native, held)
    owner._native = holder
    worker = threading.Thread(target=first_call)
    worker.start()
    try:
        assert holder.inside.wait(timeout=10)
        try:
            second_call()
        except Exception as raised:  # the refusal under test, whichever class it is
            return raised
        return None
    finally:
        holder.release.set()
        worker.join()
        owner._native = holder._native


PLAN = """
[plan]
name = "python results round trip"
[knobs]
sm_mhz = [600, 900, 1200]
[[cases]]
workloads = ["resnet50"]
batch_sizes = [32]
modes = ["train", "infer"]
[measure]
warmup_iterations = 2
duration_s = 1
repetitions = 2
max_repetitions = 2
order = "ascending"
drift_check = false
"""


@pytest.fixture
def database(dvfslab_binary, tmp_path):
    """A database `dvfslab sweep` made on sim:v100: ResNet-50 b32 training and inference at three SM
    clocks and the default, two repetitions each."""
    (tmp_path / "plan.toml").write_text(PLAN)
    db = tmp_path / "sweep.sqlite"
    sweep = subprocess.run([dvfslab_binary, "sweep", str(tmp_path / "plan.toml"), "--device", "sim:v100",
                            "--db", str(db)], capture_output=True, text=True, timeout=60)
    assert sweep.returncode == 0, sweep.stderr
    return db
