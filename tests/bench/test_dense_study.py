"""bench/dense_study.py: the dense plan, the per-case reading of a store, and one
small real sweep through the dvfslab it is given."""
import os
import subprocess

import pytest

from dense_study import dense_plan, energy_by_case, mhz, optimum_by_case, regret_pct
from sweep_runs import sweep


def test_the_study_plans_sm_line_becomes_every_clock_and_a_plan_without_one_is_refused():
    plan = dense_plan('[knobs]\n# 12 core clocks\nsm_mhz = { count = 12, min = 460 }\n\n[measure]\n')
    assert 'sm_mhz = "all"\n' in plan and "count = 12" not in plan
    with pytest.raises(ValueError):
        dense_plan("[knobs]\nmem_mhz = \"all\"\n")


def test_regret_is_against_the_least_energy_of_the_case():
    energies = {(None, None): 1.2, (900, 877): 1.0, (915, 877): 1.004, (1380, 877): 1.3}
    assert regret_pct(energies, (900, 877)) == 0
    assert regret_pct(energies, (915, 877)) == pytest.approx(0.4)
    assert regret_pct(energies, (None, None)) == pytest.approx(20)


@pytest.mark.skipif(not os.environ.get("DVFSLAB_BINARY"), reason="needs DVFSLAB_BINARY (the CMake test sets it)")
def test_a_small_real_sweep_is_read_back_per_case(tmp_path):
    binary = os.environ["DVFSLAB_BINARY"]
    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nname = "dense study test"\n\n[knobs]\nsm_mhz = { count = 4, min = 600 }\n\n'
                    '[[cases]]\nworkloads = ["alexnet", "vgg16"]\nbatch_sizes = [16]\nmodes = ["infer"]\n')
    db = str(tmp_path / "grid.sqlite")
    run = sweep(binary, str(plan), "sim:v100", "grid", db, "test")
    assert run["points"] >= 10 and run["windows"] >= run["points"] and run["gpu_s"] > 0
    energies = energy_by_case(db)
    assert sorted(energies) == [("alexnet", "infer", 16), ("vgg16", "infer", 16)]
    for case, optimum in optimum_by_case(binary, db).items():
        assert len([s for s in energies[case] if s != (None, None)]) == 4 and (None, None) in energies[case]
        assert regret_pct(energies[case], optimum) == pytest.approx(0, abs=1e-9)


def test_a_setting_prints_as_the_analysis_prints_it():
    assert mhz((1245, 3201)) == "1245/3201" and mhz((900, None)) == "900/-" and mhz((None, None)) == "-/-"


def test_the_script_refuses_a_binary_that_does_not_run(tmp_path):
    done = subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "../../bench/dense_study.py"),
                           str(tmp_path / "missing")], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.startswith("dense_study: cannot run") and "Traceback" not in done.stderr
