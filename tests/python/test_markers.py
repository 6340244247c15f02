"""dvfslab.markers under `dvfslab measure` (the real binary) and outside it."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import run_python

CHILD = textwrap.dedent("""
    import time
    from dvfslab import markers
    assert markers.active()
    with markers.window("train"):
        for _ in range(6):
            time.sleep(0.05)
            markers.iteration(items=32)
    markers.begin("eval")
    markers.iteration(2, items=12.5)
    markers.end("eval")
    markers.close()
    markers.iteration()  # after close(): nothing is written
    time.sleep(0.05)
""")


def measure(dvfslab_binary, tmp_path, script, *options):
    child = tmp_path / "child.py"
    child.write_text(script)
    result = subprocess.run(
        [dvfslab_binary, "measure", "--device", "sim:h200", "--json", *options, "--", sys.executable, str(child)],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_markers_reach_dvfslab_measure(dvfslab_binary, tmp_path):
    report = measure(dvfslab_binary, tmp_path, CHILD, "--skip-iters", "1")
    assert report["simulated"] is True
    assert report["markers"]["malformed"] == 0 and report["markers"]["rejected"] == 0
    assert report["iterations"] == 7  # 8 reported, the first skipped
    assert report["items"] == pytest.approx(5 * 32 + 12.5)
    windows = {w["name"]: w for w in report["windows"]}
    assert windows["train"]["iterations"] == 6 and windows["train"]["items"] == 192
    assert windows["eval"]["iterations"] == 2 and windows["eval"]["complete"] is True
    assert report["tail_s"] >= 0.04  # the sleep after close() is tear-down, not steady state


def test_meter_measurements_have_the_keys_of_measure_json_windows(dvfslab_binary, tmp_path):
    import dvfslab
    report = measure(dvfslab_binary, tmp_path, CHILD)
    window = report["windows"][0]  # 0.3 s: the counter moved, so energy_error_j is there
    assert "energy_estimated" not in window["flags"]
    cli_keys = set(window) - {"complete"}
    gpu = dvfslab.open("sim:h200", virtual_time=True)
    gpu.attach_load("resnet50", 32)
    meter = dvfslab.Meter(gpu)
    with meter.window("train") as train:
        gpu.advance(1.0)
        meter.step(items=32)
    # The clocks while busy are there only where the GPU was busy; the child of
    # `measure` loads no GPU, the Python window's GPU runs a load.
    busy_clocks = {"sm_mhz_busy_mean", "mem_mhz_busy_mean"}
    python_keys = set(train.measurement.to_dict()) - {"simulated"}
    assert busy_clocks <= python_keys and not busy_clocks & cli_keys
    assert python_keys - busy_clocks == cli_keys
    assert 0.5 < train.measurement.busy_fraction <= 1.0  # the sensor averages its past period: 0 at the start
    assert train.measurement.sm_mhz_busy_mean == pytest.approx(train.measurement.sm_mhz_mean)


def test_markers_do_nothing_outside_dvfslab():
    result = run_python(
        "from dvfslab import markers; markers.begin('a'); markers.iteration(items=3); markers.end('a');"
        "markers.close(); print(markers.active())",
        {"DVFSLAB_MARK_FD": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_a_descriptor_the_process_does_not_have_is_ignored():
    result = run_python("from dvfslab import markers; markers.iteration(); print(markers.active())",
                        {"DVFSLAB_MARK_FD": "987"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_lines_follow_the_protocol_and_a_forked_child_stays_silent(tmp_path):
    read_end, write_end = os.pipe()
    code = textwrap.dedent("""
        import os
        from dvfslab import markers
        markers.step(0)
        markers.step(40, items=1280)
        markers.iteration(3, items=0.5)
        with markers.window("epoch:1/a-b_c"):
            pass
        pid = os.fork()
        if pid == 0:
            markers.iteration()
            os._exit(0)
        os.waitpid(pid, 0)
    """)
    env = dict(os.environ, DVFSLAB_MARK_FD=str(write_end))
    result = subprocess.run([sys.executable, "-c", code], env=env, pass_fds=(write_end,),
                            capture_output=True, text=True, timeout=60)
    os.close(write_end)
    with os.fdopen(read_end) as lines:
        written = lines.read()
    assert result.returncode == 0, result.stderr
    assert written.splitlines() == ["dvfslab:step 0", "dvfslab:step 40 items 1280", "dvfslab:iter 3 items 0.5",
                                    "dvfslab:begin epoch:1/a-b_c", "dvfslab:end epoch:1/a-b_c"]


def test_bad_marker_arguments_are_refused():
    from dvfslab import markers
    for call in (lambda: markers.begin("two words"), lambda: markers.end("x" * 129),
                 lambda: markers.iteration(0), lambda: markers.iteration(items=float("nan")),
                 lambda: markers.step(-1), lambda: markers.iteration(items=-2)):
        with pytest.raises(ValueError):
            call()


def test_a_reader_that_went_away_stops_the_markers_with_one_warning():
    code = textwrap.dedent("""
        import os, warnings
        read_end, write_end = os.pipe()
        os.environ["DVFSLAB_MARK_FD"] = str(write_end)
        os.close(read_end)  # the measuring side is gone
        from dvfslab import markers
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            markers.iteration()
            markers.iteration()
        print(len(caught), markers.active(), "Broken pipe" in str(caught[0].message))
    """)
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "False", "True"]


def written_lines(env_updates, code="from dvfslab import markers; markers.iteration(items=4); markers.begin('a')"):
    read_end, write_end = os.pipe()
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")}
    env.update(env_updates, DVFSLAB_MARK_FD=str(write_end))
    result = subprocess.run([sys.executable, "-W", "always", "-c", code], env=env, pass_fds=(write_end,),
                            capture_output=True, text=True, timeout=60)
    os.close(write_end)
    with os.fdopen(read_end) as lines:
        written = lines.read()
    assert result.returncode == 0, result.stderr
    return written.splitlines(), result


def test_lines_carry_the_rank_from_the_environment():
    assert written_lines({"RANK": "3", "LOCAL_RANK": "1"})[0] == ["dvfslab:iter 1 items 4 rank 3",
                                                                 "dvfslab:begin a rank 3"]
    assert written_lines({"LOCAL_RANK": "2"})[0] == ["dvfslab:iter 1 items 4 rank 2", "dvfslab:begin a rank 2"]
    assert written_lines({"RANK": "", "LOCAL_RANK": "0"})[0][0] == "dvfslab:iter 1 items 4 rank 0"
    assert written_lines({})[0] == ["dvfslab:iter 1 items 4", "dvfslab:begin a"]


def test_lines_say_how_many_ranks_the_job_has_when_the_launcher_says():
    torchrun = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    assert written_lines(torchrun)[0] == ["dvfslab:iter 1 items 4 rank 3 of 4", "dvfslab:begin a rank 3 of 4"]
    assert written_lines({"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "WORLD_SIZE": "8"})[0][0] == \
        "dvfslab:iter 1 items 4 rank 1 of 2", "the local rank counts within the local size"
    for bad in ("3", "0", "x", "70000"):
        lines, result = written_lines({"RANK": "3", "WORLD_SIZE": bad})
        assert lines[0] == "dvfslab:iter 1 items 4 rank 3", bad
        assert "is not a number of ranks above 3" in result.stderr, bad


def test_a_rank_whose_launcher_closed_the_descriptor_writes_through_its_parents():
    launcher = textwrap.dedent("""
        import os, subprocess, sys
        rank = "from dvfslab import markers; markers.iteration(); print(markers.active())"
        for env in (dict(os.environ, LOCAL_RANK="1"), dict(os.environ)):  # a rank, then a plain child
            print(subprocess.run([sys.executable, "-c", rank], env=env, capture_output=True, text=True,
                                 check=True).stdout.strip())
    """)
    lines, result = written_lines({}, launcher)
    assert lines == ["dvfslab:iter 1 rank 1"]
    assert result.stdout.split() == ["True", "False"]


def test_a_rank_that_is_not_an_integer_is_left_out_with_a_warning():
    for bad in ("-1", "one", "1.0", "70000", "\u00b2"):
        lines, result = written_lines({"RANK": bad})
        assert lines == ["dvfslab:iter 1 items 4", "dvfslab:begin a"], bad
        assert "is not a rank" in result.stderr, bad


# A launcher like torchrun: ranks started with subprocess's close_fds, so they reach
# the marker pipe through this process's descriptor.
RANKS = textwrap.dedent("""
    import os, subprocess, sys
    rank = "import sys; from dvfslab import markers; [markers.iteration(items=8) for _ in range(int(sys.argv[1]))]"
    for rank_number, count in ((1, 4), (0, 6)):  # rank 1 lags: 4 iterations to rank 0's 6
        env = dict(os.environ, RANK=str(rank_number))
        subprocess.run([sys.executable, "-c", rank, str(count)], env=env, check=True)
""")


@pytest.mark.parametrize("iterations_from, counted", [("rank0", 6), ("slowest", 4)])
def test_measure_counts_the_ranks_iterations_as_asked(dvfslab_binary, tmp_path, iterations_from, counted):
    report = measure(dvfslab_binary, tmp_path, RANKS, "--iterations-from", iterations_from)
    assert report["markers"]["lines"] == 10
    assert report["markers"]["malformed"] == 0 and report["markers"]["rejected"] == 0
    # The steady window opens at the first iteration counted: the rest are its.
    assert report["iterations"] == counted - 1
    assert report["items"] == 8 * (counted - 1)
