"""`cmake --install` puts a working package where the interpreter finds it (docs/python.md)."""
import os
import subprocess
import sysconfig

from conftest import run_python


def test_the_installed_package_imports_and_measures(tmp_path):
    build_dir = os.environ["DVFSLAB_BUILD_DIR"]
    prefix = tmp_path / "prefix"
    install = subprocess.run([os.environ["DVFSLAB_CMAKE"], "--install", build_dir, "--prefix", str(prefix),
                              "--component", "python"], capture_output=True, text=True, timeout=120)
    assert install.returncode == 0, install.stderr
    install_dir = os.environ["DVFSLAB_PYTHON_INSTALL_DIR"]
    if os.environ["DVFSLAB_INSTALL_PREFIX"] == sysconfig.get_config_var("prefix") + "/local":
        # Debian: the default prefix /usr/local puts it in the folder /usr/bin/python3 reads.
        assert os.path.join("/usr/local", install_dir) == sysconfig.get_path("platlib")
    platlib = os.path.join(prefix, install_dir)
    package = os.path.join(platlib, "dvfslab")
    assert os.path.isfile(os.path.join(package, "__init__.py"))
    assert os.path.isfile(os.path.join(package, "_dvfslab.pyi"))
    assert not os.path.islink(os.path.join(package, "meter.py"))
    code = ("import dvfslab\n"
            "gpu = dvfslab.open('sim:v100', virtual_time=True)\n"
            "with dvfslab.Meter(gpu) as meter, meter.window('w') as w:\n"
            "    gpu.advance(1.0)\n"
            "print(dvfslab.__file__, w.measurement.duration_s)\n")
    result = run_python(code, {"PYTHONPATH": platlib})
    assert result.returncode == 0, result.stderr
    location, seconds = result.stdout.split()
    assert location.startswith(str(prefix)) and float(seconds) == 1.0
