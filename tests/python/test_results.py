"""dvfslab.results(): a database made by `dvfslab sweep` on sim:v100, read back as
the `analyze --json --points` document, as objects and as a pandas DataFrame."""
import json
import subprocess

import pytest

import dvfslab


def analyze_json(dvfslab_binary, path, objective="energy"):
    result = subprocess.run([dvfslab_binary, "analyze", str(path), "--json", "--points", "--objective", objective],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_results_are_the_analyze_json_document(dvfslab_binary, database):
    for objective in ("energy", "energy-within-slowdown:10%"):
        results = dvfslab.results(database, objective=objective)
        assert results.to_dict() == analyze_json(dvfslab_binary, database, objective)
        assert results.objective == objective


def test_results_as_objects(database):
    results = dvfslab.results(str(database))
    assert len(results.cases) == 2
    train = next(case for case in results.cases if case.mode == "train")
    assert (train.gpu, train.workload, train.batch, train.simulated) == ("Tesla V100-PCIE-16GB", "resnet50", 32, True)
    assert train.settings == 4  # three SM clocks and the default
    assert train.baseline.sm_mhz is None and train.baseline_kind == "vendor-default"
    assert train.optimum.sm_mhz in (600, 900, 1200)
    assert train.energy_saving_pct > 0
    assert train.points[0].time_per_iteration_s.mean > 0 and train.points[0].repetitions == 2
    assert results.summary[0].cases == 1
    with pytest.raises(AttributeError):
        train.optimum = None


def test_to_pandas_has_one_row_per_setting(database):
    pandas = pytest.importorskip("pandas")
    results = dvfslab.results(database)
    points = results.to_pandas()
    assert isinstance(points, pandas.DataFrame)
    assert len(points) == 8
    assert points.groupby("mode")["optimum"].sum().to_dict() == {"infer": 1, "train": 1}
    assert points.groupby("mode")["baseline"].sum().to_dict() == {"infer": 1, "train": 1}
    best = points[points.optimum & (points["mode"] == "train")].iloc[0]
    train = next(case for case in results.cases if case.mode == "train")
    assert best.energy_per_item_j == pytest.approx(train.optimum.energy_per_item_j)
    assert best.sm_mhz == train.optimum.sm_mhz
    cases = results.to_pandas("cases")
    assert len(cases) == 2 and "energy_saving_pct" in cases.columns
    with pytest.raises(ValueError):
        results.rows("settings")


def test_a_published_sweep_table_reads_like_a_database(dvfslab_binary, source_dir):
    table = f"{source_dir}/data/published/v100-dnn-power-limit.csv"
    assert dvfslab.results(table).to_dict() == analyze_json(dvfslab_binary, table)


def test_a_profile_point_is_its_own_setting_not_the_baseline(dvfslab_binary, tmp_path):
    plan = tmp_path / "profiles.toml"
    plan.write_text('[knobs]\nworkload_profile = ["max-q", "compute"]\n[[cases]]\nworkloads = ["resnet50"]\n'
                    'batch_sizes = [32]\n[measure]\nrepetitions = 1\n')
    database = tmp_path / "profiles.sqlite"
    sweep = subprocess.run([dvfslab_binary, "sweep", str(plan), "--device", "sim:h200", "--db", str(database)],
                           capture_output=True, text=True, timeout=120)
    assert sweep.returncode == 0, sweep.stderr
    rows = dvfslab.results(database).rows()
    assert sorted(str(row["workload_profile"]) for row in rows) == ["None", "compute", "max-q"]
    assert [row["workload_profile"] for row in rows if row["baseline"]] == [None]
    assert [row["workload_profile"] for row in rows if row["optimum"]] == ["max-q"]
    case = dvfslab.results(database).rows("cases")[0]
    assert case["optimum_workload_profile"] == "max-q" and case["baseline_workload_profile"] is None
