"""Meter windows and steps on simulated GPUs whose exact energy is known."""
import pytest

import dvfslab
from conftest import refused_while_another_thread_is_inside


def steady_gpu(model="h200"):
    gpu = dvfslab.open(f"sim:{model}", virtual_time=True)
    gpu.attach_load("resnet50", 64, "train", "bf16")
    gpu.advance(2.0)  # past the first sensor updates of the load
    return gpu


def test_window_energy_matches_the_simulators_true_energy_within_its_error_bound():
    gpu = steady_gpu()
    with dvfslab.Meter(gpu) as meter:
        before = gpu.true_energy_j()
        with meter.window("train") as train:
            gpu.advance(5.0)
        truth = gpu.true_energy_j() - before
    m = train.measurement
    assert m.name == "train"
    assert m.simulated
    assert m.duration_s == pytest.approx(5.0, abs=1e-9)
    assert abs(m.energy_j - truth) <= m.energy_error_j + 1e-6
    assert abs(m.energy_j - truth) / truth < 0.01
    assert m.mean_power_w == pytest.approx(m.energy_j / m.duration_s)
    assert m.flags == []
    assert m.sm_mhz_mean > 0 and m.samples > 50


def test_steps_are_back_to_back_and_add_up_to_the_window():
    gpu = steady_gpu("v100")
    meter = dvfslab.Meter(gpu)
    items_per_step = dvfslab.SimGpu.items_per_iteration("resnet50", 64)
    with meter.window("train") as train:
        steps = []
        for _ in range(30):
            gpu.simulate("resnet50", 64, iterations=2)
            steps.append(meter.step(items=2 * items_per_step, iterations=2))
    meter.close()
    whole = train.measurement
    assert sum(s.energy_j for s in steps) == pytest.approx(whole.energy_j, rel=1e-9)
    assert sum(s.duration_s for s in steps) == pytest.approx(whole.duration_s, rel=1e-9)
    assert whole.iterations == 60 and whole.items == 60 * items_per_step
    step = steps[-1]
    assert step.name == "step" and step.iterations == 2
    assert step.time_per_iteration_s == pytest.approx(step.duration_s / 2)
    assert step.energy_per_item_j == pytest.approx(step.energy_j / step.items)
    assert step.items_per_s == pytest.approx(step.items / step.duration_s)


def test_a_step_does_not_read_the_gpu():
    gpu = steady_gpu()
    meter = dvfslab.Meter(gpu, keep_trace=True)  # the trace holds every reading of the GPU
    gpu.advance(0.37)
    readings = len(meter.trace())
    meter.step()
    assert len(meter.trace()) == readings
    with meter.window("read"):  # a window's ends do read it
        pass
    assert len(meter.trace()) == readings + 3  # its begin (and the step restarted there), its end


def test_a_steps_energy_is_within_its_error_bound_of_the_true_energy():
    gpu = steady_gpu()
    meter = dvfslab.Meter(gpu)
    meter.step()
    bounded = 0
    for i in range(20):
        before = gpu.true_energy_j()
        gpu.advance(0.23 + 0.017 * (i % 5))
        step = meter.step()
        truth = gpu.true_energy_j() - before
        if step.energy_error_j is not None:
            bounded += 1
            assert abs(step.energy_j - truth) <= step.energy_error_j + 1e-6, (i, step.energy_j, truth)
    assert bounded == 20


def test_skip_iterations_opens_the_window_after_the_warmup_steps():
    gpu = steady_gpu("v100")
    meter = dvfslab.Meter(gpu)
    with meter.window("all") as everything, meter.window("steady", skip_iterations=3) as steady:
        steps = []
        for _ in range(10):
            gpu.simulate("resnet50", 64)
            steps.append(meter.step(items=64))
    assert everything.measurement.iterations == 10
    assert steady.measurement.iterations == 7
    assert steady.measurement.energy_j == pytest.approx(sum(s.energy_j for s in steps[3:]), rel=1e-9)


def test_a_window_that_never_passed_its_warmup_measures_nothing():
    meter = dvfslab.Meter(dvfslab.open("sim:v100", virtual_time=True))
    with meter.window("steady", skip_iterations=5) as steady:
        meter.step()
    assert steady.measurement is None
    with meter.window("steady") as again:  # the name is free again
        pass
    assert again.measurement.iterations == 0


def test_window_is_measured_when_its_block_raises():
    gpu = steady_gpu("v100")
    meter = dvfslab.Meter(gpu)
    with pytest.raises(KeyError):
        with meter.window("failing") as failing:
            gpu.advance(1.0)
            raise KeyError("the training step failed")
    assert failing.measurement.duration_s == pytest.approx(1.0)
    assert meter.open_windows() == []


def test_idle_baseline_adds_dynamic_energy():
    gpu = dvfslab.open("sim:v100", virtual_time=True)
    meter = dvfslab.Meter(gpu, idle_seconds=1.0)
    assert meter.idle_power_w > 0
    gpu.attach_load("vgg16", 32)
    with meter.window("load") as load:
        gpu.advance(3.0)
    m = load.measurement
    assert m.idle_power_w == meter.idle_power_w
    assert m.dynamic_energy_j == pytest.approx(m.energy_j - m.idle_power_w * m.duration_s)


def test_short_steps_are_flagged():
    gpu = steady_gpu("v100")
    meter = dvfslab.Meter(gpu)
    gpu.advance(0.05)
    assert "short_window" in meter.step().flags


def test_window_names_are_checked():
    meter = dvfslab.Meter(dvfslab.open("sim:v100", virtual_time=True))
    meter.begin("a")
    with pytest.raises(ValueError, match="already open"):
        meter.begin("a")
    with pytest.raises(ValueError, match="not open"):
        meter.end("b")
    for bad in ("", "dvfslab.step", 3):
        with pytest.raises(ValueError):
            meter.begin(bad)
    with pytest.raises(ValueError):
        meter.step(iterations=0)
    with pytest.raises(ValueError):
        meter.step(items=-1)
    assert meter.open_windows() == ["a"]
    meter.close()
    with pytest.raises(ValueError, match="closed"):
        meter.step()


def test_trace_keeps_every_reading(tmp_path):
    gpu = steady_gpu("v100")
    meter = dvfslab.Meter(gpu, keep_trace=True, sample_period_s=0.1)
    gpu.advance(1.0)
    samples = meter.trace()
    assert len(samples) >= 10 and "power_instant_w" in samples[0]
    meter.write_trace(tmp_path / "trace.csv")
    assert (tmp_path / "trace.csv").read_text().count("\n") == len(meter.trace()) + 1


def test_a_wall_time_meter_samples_on_its_own_thread():
    import time
    gpu = dvfslab.open("sim:h200")
    assert not gpu.virtual_time
    gpu.attach_load("alexnet", 64)
    with dvfslab.Meter(gpu, sample_period_s=0.01) as meter:
        with meter.window("sleep") as sleeping:
            time.sleep(0.5)
    m = sleeping.measurement
    # The window's own two readings, and at least one of the ~50 the thread takes
    # (a loaded machine may delay it, never stop it).
    assert m.duration_s >= 0.5 and m.samples >= 3 and m.energy_j > 0


def test_l5_a_meter_used_by_two_threads_at_once_raises_dvfslab_error():
    gpu = dvfslab.open("sim:v100", virtual_time=True)
    with dvfslab.Meter(gpu) as meter:
        raised = refused_while_another_thread_is_inside(meter, {"step"}, lambda: meter.step(), lambda: meter.step())
    assert isinstance(raised, dvfslab.Error) and "in use by another thread" in str(raised)


@pytest.mark.parametrize("period_s", [1e-12, 0.004, float("inf"), 1e9, float("nan"), 0.0, -1.0])
def test_l5_meter_refuses_sample_periods_outside_5_ms_to_60_s(period_s):
    gpu = dvfslab.open("sim:v100", virtual_time=True)
    with pytest.raises(ValueError, match="sample_period_s must be from 0.005 to 60.0 s"):
        dvfslab.Meter(gpu, sample_period_s=period_s)


@pytest.mark.parametrize("period_s", [0.005, 60.0])
def test_l5_meter_takes_the_sample_period_bounds_themselves(period_s):
    with dvfslab.Meter(dvfslab.open("sim:v100", virtual_time=True), sample_period_s=period_s) as meter:
        assert meter.sample_period_s == period_s


@pytest.mark.parametrize("items", [float("inf"), float("nan"), -5])
def test_l5_meter_step_refuses_infinite_nan_and_negative_items(items):
    with dvfslab.Meter(dvfslab.open("sim:v100", virtual_time=True)) as meter:
        with meter.window("w") as window:
            with pytest.raises(ValueError, match="items must be a finite number of 0 or more"):
                meter.step(items=items)
            meter.step(items=8)
    assert window.measurement.items == 8 and window.measurement.iterations == 1


def test_m4_meter_step_iterations_past_2_63_are_refused_not_wrapped():
    gpu = dvfslab.open("sim:v100", virtual_time=True)
    with dvfslab.Meter(gpu) as meter:
        with meter.window("w") as window:
            gpu.advance(1.0)
            meter.step(iterations=2**62)
            with pytest.raises(ValueError, match=r"past 2\*\*63 - 1: refused rather than wrapped"):
                meter.step(iterations=2**62)
    assert window.measurement.iterations == 2**62


def test_a_meter_over_two_simulated_gpus_gives_the_jobs_total_and_each_gpus_share():
    gpus = dvfslab.open_all("sim:h200x2", virtual_time=True)
    assert [gpu.uuid for gpu in gpus] == [gpus[0].uuid, gpus[1].uuid] and gpus[0].uuid != gpus[1].uuid
    for gpu in gpus:
        gpu.attach_load("resnet50", 64, "train", "bf16")
    gpus[0].advance(2.0)  # one clock: both GPUs are past their first sensor updates
    with dvfslab.Meter(gpus) as meter:
        before = [gpu.true_energy_j() for gpu in gpus]
        with meter.window("train") as train:
            gpus[0].advance(5.0)
        truth = [gpu.true_energy_j() - start for gpu, start in zip(gpus, before)]
    m = train.measurement
    assert [share.index for share in m.gpus] == [0, 1]
    assert [share.uuid for share in m.gpus] == [gpu.uuid for gpu in gpus]
    for share, true_energy in zip(m.gpus, truth):
        assert share.duration_s == pytest.approx(5.0, abs=1e-9)
        assert abs(share.energy_j - true_energy) <= share.energy_error_j + 1e-6
    assert m.energy_j == pytest.approx(m.gpus[0].energy_j + m.gpus[1].energy_j, rel=1e-12)
    # The second simulated board is a different one (sim: node variation).
    assert truth[1] != pytest.approx(truth[0], rel=1e-3)


def test_a_meter_refuses_an_empty_list_and_what_is_not_a_gpu():
    with pytest.raises(TypeError):
        dvfslab.Meter([])
    with pytest.raises(TypeError):
        dvfslab.Meter(["sim:h200"])


def test_a_meter_over_one_gpu_has_no_per_gpu_shares():
    gpu = steady_gpu()
    with dvfslab.Meter(gpu) as meter:
        with meter.window("w") as window:
            gpu.advance(1.0)
    assert window.measurement.gpus == []
    assert "gpus" not in window.measurement.to_dict()
