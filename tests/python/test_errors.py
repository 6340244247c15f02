"""C++ errors arrive as the dvfslab.Error class of the same name (include/dvfslab/error.hpp)."""
import builtins

import pytest

import dvfslab
from conftest import run_python


def test_the_hierarchy_mirrors_the_cpp_classes_and_their_exit_codes():
    codes = {"Error": 1, "UsageError": 2, "ConfigError": 3, "DriverNotFoundError": 4, "PermissionError": 5,
             "NotSupportedError": 6, "GpuLostError": 7, "StoreError": 8, "BusyError": 9, "InterruptedError": 130}
    for name, code in codes.items():
        error_class = getattr(dvfslab, name)
        assert issubclass(error_class, dvfslab.Error) and issubclass(error_class, Exception)
        assert error_class.exit_code == code
        assert error_class.__module__ == "dvfslab"
    assert dvfslab.PermissionError is not builtins.PermissionError
    assert "PermissionError" not in dvfslab.__all__  # a star import keeps the built-in


@pytest.mark.parametrize("spec, error, words", [
    ("", dvfslab.UsageError, "--device is empty"),
    ("replay:", dvfslab.UsageError, "needs a sweep table"),
    ("sim:nope", dvfslab.ConfigError, "unknown simulated GPU"),
    ("replay:/nonexistent/table.csv", dvfslab.ConfigError, "table.csv"),
])
def test_a_bad_device_spec_raises_its_class(spec, error, words):
    with pytest.raises(error, match=words):
        dvfslab.open(spec)


def test_result_inputs_raise_config_and_store_errors(tmp_path):
    with pytest.raises(dvfslab.ConfigError, match="does not exist"):
        dvfslab.results(tmp_path / "missing.sqlite")
    not_a_database = tmp_path / "notes.sqlite"
    not_a_database.write_text("just text, not SQLite\n" * 100)
    with pytest.raises(dvfslab.StoreError):
        dvfslab.results(not_a_database)
    with pytest.raises(dvfslab.ConfigError, match="objective"):
        dvfslab.results(tmp_path / "missing.csv", objective="fastest")


def test_no_driver_raises_driver_not_found(fake_nvml):
    # A process of its own: the first NVML library loaded stays for the process.
    result = run_python(
        "import dvfslab, sys\n"
        "try:\n"
        f"    dvfslab.devices(nvml_library={fake_nvml!r})\n"
        "except dvfslab.DriverNotFoundError as e:\n"
        "    print('DriverNotFoundError', e.exit_code)\n",
        {"DVFSLAB_FAKE_NVML_NO_DRIVER": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["DriverNotFoundError", "4"]
