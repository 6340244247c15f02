#!/usr/bin/env python3
"""`dvfslab slurm prolog` / `epilog` as a real Slurm's Prolog and Epilog, over the fake NVML.

A private single-node cluster whose node has two GPUs as GRES (gpu:2; their device
files are character devices made in the test directory, since the fake NVML has no
/dev/nvidia*). slurmd runs the prolog and epilog as root, through wrapper scripts
that point dvfslab at the fake NVML (an H200 and a V100, control state kept in a
file so that it outlives each process, every setter call logged). The optimum table
comes from `dvfslab analyze --emit optimum-table` of a sweep table the test writes
for the fake GPUs' models: the H200 has two workloads with different optima (so no
default), the V100 one (its optimum is the default).

Checked, each from the fake's setter log and its state file:
- a job tagged with a workload (--comment dvfslab=TAG) on the H200 runs with the
  tag's SM and memory clocks locked and power limit set, no application-clock call;
  after it ends the epilog puts the GPU back to the state found;
- a job on both GPUs without a tag: the V100 gets its default, the H200 (no
  default) is untouched, and the log says why; the epilog restores the V100;
- a job killed with scancel while running is restored by the epilog;
- `dvfslab restore` puts a running job's GPU back from the prolog's journal (the
  path after a crash), and the epilog then has nothing to restore;
- an opted-out job (--comment dvfslab=off) and a job without GPUs make no setter call.

Usage: prolog_test.py DVFSLAB_BINARY FAKE_NVML_LIBRARY WORK_DIR. Exit 77 (skipped)
when not root. The daemons are stopped at the end, also when a check fails.
"""
import json
import os
import shutil
import signal
import stat
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Failure, check, run  # noqa: E402
from private_cluster import PrivateCluster  # noqa: E402

WAIT_LIMIT_S = 60
APPLICATION_CLOCK_CALLS = ("nvmlDeviceSetApplicationsClocks", "nvmlDeviceResetApplicationsClocks")


def wait_for(description, predicate):
    deadline = time.monotonic() + WAIT_LIMIT_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise Failure(f"timed out after {WAIT_LIMIT_S} s waiting for {description}")


def read_lines(path):
    try:
        with open(path) as log:
            return log.read().splitlines()
    except FileNotFoundError:
        return []


class FakeGpus:
    """The fake NVML's files: its setter log and the control state it keeps."""

    def __init__(self, work, library):
        self.log = os.path.join(work, "nvml-setters.log")
        self.state = os.path.join(work, "nvml-state.json")
        self.env = {
            "DVFSLAB_NVML_LIBRARY": library,
            "DVFSLAB_FAKE_NVML_GPUS": "h200,v100",
            "DVFSLAB_FAKE_NVML_LOG": self.log,
            "DVFSLAB_FAKE_NVML_STATE": self.state,
            "DVFSLAB_FAKE_NVML_UUID_SALT": f"prolog-test-{os.getpid()}",
        }

    def controls(self):
        with open(self.state) as state:
            return {device["index"]: device["controls"] for device in json.load(state)["devices"]}

    def setter_calls(self, start):
        return read_lines(self.log)[start:]

    def call_count(self):
        return len(read_lines(self.log))


def write_table(dvfslab, work, env, info):
    """A sweep table for the fake GPUs' models and the optimum table analyze emits from it."""
    h200 = next(gpu for gpu in info if "H200" in gpu["name"])
    v100 = next(gpu for gpu in info if "V100" in gpu["name"])
    v100_memory = str(v100["clocks"]["memory_mhz"][0])
    v100_sm = v100["clocks"]["graphics_mhz"][v100_memory][len(v100["clocks"]["graphics_mhz"][v100_memory]) // 2]
    rows = [
        # workload a: 1200 MHz, memory 2201 MHz, 400 W saves the most energy
        (h200["name"], "a", 1980, 3201, 700, 1.0, 600.0, 1),
        (h200["name"], "a", 1200, 2201, 400, 1.2, 350.0, 0),
        (h200["name"], "a", 1500, 3201, 500, 1.1, 500.0, 0),
        # workload b: 1500 MHz, 3201 MHz, 500 W does
        (h200["name"], "b", 1980, 3201, 700, 1.0, 600.0, 1),
        (h200["name"], "b", 1200, 2201, 400, 2.0, 350.0, 0),
        (h200["name"], "b", 1500, 3201, 500, 1.1, 420.0, 0),
        # the V100's one workload: its middle clock at 200 W
        (v100["name"], "c", "", "", 300, 1.0, 250.0, 1),
        (v100["name"], "c", v100_sm, "", 200, 1.1, 150.0, 0),
    ]
    sweep = os.path.join(work, "sweep.csv")
    with open(sweep, "w") as table:
        table.write("source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n")
        for row in rows:
            table.write("prolog test," + ",".join(str(value) for value in row) + "\n")
    emitted = run([dvfslab, "analyze", sweep, "--emit", "optimum-table"], env=env).stdout
    path = os.path.join(work, "optimum-table.json")
    with open(path, "w") as out:
        out.write(emitted)
    table = json.loads(emitted)
    by_gpu = {entry["gpu"]: entry for entry in table["gpus"]}
    check(by_gpu[h200["name"]]["default"] is None, f"the H200's workloads differ, so no default: {emitted}")
    tags = {(setting["sm_mhz"], setting["mem_mhz"], setting["power_limit_w"]): tag
            for tag, setting in by_gpu[h200["name"]]["workloads"].items()}
    check((1200, 2201, 400) in tags, f"workload a's optimum in the table: {emitted}")
    v100_default = by_gpu[v100["name"]]["default"]
    check({knob: v100_default[knob] for knob in ("sm_mhz", "mem_mhz", "power_limit_w")}
          == {"sm_mhz": v100_sm, "mem_mhz": None, "power_limit_w": 200},
          f"the V100's only optimum is its default: {emitted}")
    # 1.1 s at 150 W against 1.0 s at 250 W: 34 % less energy, 10 % longer.
    check(abs(v100_default["expected_energy_saving"] - 0.34) < 1e-9
          and abs(v100_default["expected_time_change"] - 0.1) < 1e-9,
          f"the V100's default carries the measured saving and time change: {emitted}")
    return path, tags[(1200, 2201, 400)], v100_sm


def job_script(work, name, dvfslab, stage, arguments, fake_env, slurm_conf):
    """slurmd runs Prolog/Epilog with an environment of its own: the wrapper adds the fake NVML's."""
    path = os.path.join(work, name)
    exports = "".join(f"export {key}='{value}'\n" for key, value in fake_env.items())
    with open(path, "w") as script:
        script.write("#!/bin/sh\n" + exports + f"export SLURM_CONF='{slurm_conf}'\nexport PATH=/usr/bin:/bin\n"
                     f"exec '{dvfslab}' slurm {stage} {arguments}\n")
    os.chmod(path, 0o755)
    return path


def submit(cluster, args):
    # The job's output goes to the test's directory, not to where the test was started.
    output = f"--output={cluster.directory}/job-%j.out"
    return run(["sbatch", "--parsable", output, *args], env=cluster.env).stdout.strip().split(";")[0]


def job_state(cluster, job_id):
    shown = run(["scontrol", "show", "job", "-o", job_id], env=cluster.env, expect=None).stdout
    for field in shown.split():
        if field.startswith("JobState="):
            return field.split("=", 1)[1]
    return ""


def log_has(path, job_id, text):
    return any(f"job {job_id}: " in line and text in line for line in read_lines(path))


def wait_for_epilog(cluster, log, job_id):
    wait_for(f"job {job_id} to end", lambda: job_state(cluster, job_id) in ("COMPLETED", "CANCELLED", "FAILED"))
    wait_for(f"job {job_id}'s epilog", lambda: any(f"epilog: job {job_id}: " in line for line in read_lines(log)))


def main():
    if os.geteuid() != 0:
        print("skipped: the private Slurm cluster needs root (slurmd runs jobs as their submitter)")
        return 77
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    dvfslab, library, work = (os.path.abspath(argument) for argument in sys.argv[1:])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "dev"))
    fake = FakeGpus(work, library)
    env = dict(os.environ, **fake.env)
    info = json.loads(run([dvfslab, "info", "--device", "all", "--json"], env=env).stdout)["devices"]
    initial = fake.controls()
    table, tag_a, v100_sm = write_table(dvfslab, work, env, info)

    # GRES needs a device file per GPU; these have /dev/null's numbers and live here.
    for index in range(2):
        os.mknod(os.path.join(work, "dev", f"fakegpu{index}"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    journals = os.path.join(work, "journals")
    log = os.path.join(work, "dvfslab-jobs.log")
    common = f"--state-dir '{journals}' --log '{log}'"
    cluster_dir = os.path.join(work, "cluster")
    slurm_conf = os.path.join(cluster_dir, "slurm.conf")
    prolog = job_script(work, "prolog.sh", dvfslab, "prolog", f"--table '{table}' {common}", fake.env, slurm_conf)
    epilog = job_script(work, "epilog.sh", dvfslab, "epilog", common, fake.env, slurm_conf)
    cluster = PrivateCluster(cluster_dir, gres="gpu:2",
                             gres_conf=[f"Name=gpu File={work}/dev/fakegpu[0-1]"],
                             extra_config=[f"Prolog={prolog}", f"Epilog={epilog}", "PrologFlags=Alloc"])
    # ctest's timeout sends SIGTERM: leave through the with block, which stops the daemons.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("prolog_test: terminated"))
    try:
        with cluster:
            run_jobs(cluster, fake, initial, log, journals, tag_a, v100_sm, env, dvfslab, work)
    except Failure as failure:
        print(f"FAILED: {failure}")
        print("\n".join(read_lines(log)))
        return 1
    print("prolog test passed")
    return 0


def check_restored(fake, initial, journals, what):
    check(fake.controls() == initial, f"{what}: the GPUs are as found: {fake.controls()} vs {initial}")
    check(not os.listdir(journals), f"{what}: no journal left: {os.listdir(journals)}")


def run_jobs(cluster, fake, initial, log, journals, tag_a, v100_sm, env, dvfslab, work):
    during = os.path.join(work, "during.json")

    # 1. Tagged job on the first GPU (the H200): the tag's optimum while it runs.
    start = fake.call_count()
    job = submit(cluster, ["--gres=gpu:1", f"--comment=dvfslab={tag_a}", f"--wrap=cp '{fake.state}' '{during}'"])
    wait_for_epilog(cluster, log, job)
    calls = fake.setter_calls(start)
    with open(during) as state:
        running = {device["index"]: device["controls"] for device in json.load(state)["devices"]}
    check(running[0]["locked_sm_min_mhz"] == 1200 and running[0]["locked_sm_max_mhz"] == 1200,
          f"job {job}: SM clock locked at 1200 MHz while it ran: {running[0]}")
    check(running[0]["locked_mem_min_mhz"] == 2201 and running[0]["power_limit_w"] == 400.0,
          f"job {job}: memory locked at 2201 MHz and 400 W while it ran: {running[0]}")
    check("nvmlDeviceSetGpuLockedClocks device=0 min_mhz=1200 max_mhz=1200" in calls, f"locked SM call: {calls}")
    check("nvmlDeviceSetMemoryLockedClocks device=0 min_mhz=2201 max_mhz=2201" in calls, f"locked memory: {calls}")
    check("nvmlDeviceSetPowerManagementLimit device=0 limit_mw=400000" in calls, f"power limit call: {calls}")
    check(not any(call.startswith(APPLICATION_CLOCK_CALLS) for call in calls), f"no application clocks: {calls}")
    check(all("device=1" not in call for call in calls), f"job {job} had one GPU: {calls}")
    check(log_has(log, job, f"workload tag {tag_a}"), f"job {job}: the log names the tag")
    check_restored(fake, initial, journals, f"job {job} after its epilog")

    # 2. Both GPUs, no tag: the V100's default; the H200 has none and is untouched.
    start = fake.call_count()
    job = submit(cluster, ["--gres=gpu:2", "--wrap=true"])
    wait_for_epilog(cluster, log, job)
    calls = fake.setter_calls(start)
    check(f"nvmlDeviceSetGpuLockedClocks device=1 min_mhz={v100_sm} max_mhz={v100_sm}" in calls, f"V100: {calls}")
    check("nvmlDeviceSetPowerManagementLimit device=1 limit_mw=200000" in calls, f"V100 power limit: {calls}")
    check(all("device=0" not in call for call in calls), f"job {job}: the H200 has no default: {calls}")
    check(log_has(log, job, "has no default"), f"job {job}: the log says why the H200 is left alone")
    check_restored(fake, initial, journals, f"job {job} after its epilog")

    # 3. Killed with scancel while it runs: the epilog restores.
    job = submit(cluster, ["--gres=gpu:1", f"--comment=dvfslab={tag_a}", "--wrap=sleep 300"])
    wait_for(f"job {job} running", lambda: job_state(cluster, job) == "RUNNING" and fake.controls() != initial)
    check(os.listdir(journals), f"job {job}: the prolog's journal is there while it runs")

    def applied_records():
        return [name for name in os.listdir(journals) if name.startswith("applied-")]

    # The prolog writes its record once the setting is applied: the GPU may read changed a moment before.
    wait_for(f"job {job}: the prolog's applied record", lambda: applied_records())
    records = applied_records()
    check(len(records) == 1, f"job {job}: the prolog's applied record is beside the journal: {os.listdir(journals)}")
    with open(os.path.join(journals, records[0])) as record_file:
        record = json.load(record_file)
    check(record["job_id"] == job and record["tag"] == tag_a and record["expected_energy_saving"] > 0,
          f"job {job}: the record names the job, its tag and the expected saving: {record}")
    run(["scancel", job], env=cluster.env)
    wait_for_epilog(cluster, log, job)
    check(log_has(log, job, "restored as found"), f"job {job}: the epilog restored after scancel")
    check_restored(fake, initial, journals, f"job {job} after scancel")

    # 4. After a crash (no epilog), `dvfslab restore` reads the prolog's journal.
    job = submit(cluster, ["--gres=gpu:1", f"--comment=dvfslab={tag_a}", "--wrap=sleep 300"])
    wait_for(f"job {job} running", lambda: job_state(cluster, job) == "RUNNING" and fake.controls() != initial)
    restored = run([dvfslab, "restore", "--state-dir", journals], env=env).stdout
    check("restored the state" in restored, f"dvfslab restore: {restored}")
    check_restored(fake, initial, journals, f"job {job} after dvfslab restore")
    run(["scancel", job], env=cluster.env)
    wait_for_epilog(cluster, log, job)
    check(log_has(log, job, "nothing to restore"), f"job {job}: the epilog found nothing left to restore")

    # 5. Opted out, and without GPUs: no setter call at all.
    start = fake.call_count()
    opted_out = submit(cluster, ["--gres=gpu:1", f"--comment=keep dvfslab=off {tag_a}", "--wrap=true"])
    wait_for_epilog(cluster, log, opted_out)
    no_gpus = submit(cluster, ["--comment=dvfslab=" + tag_a, "--wrap=true"])
    wait_for_epilog(cluster, log, no_gpus)
    check(fake.setter_calls(start) == [], f"opted-out and GPU-less jobs made setter calls: {fake.setter_calls(start)}")
    check(log_has(log, opted_out, "opted out"), f"job {opted_out}: the log says it opted out")
    check(log_has(log, no_gpus, "no GPUs"), f"job {no_gpus}: the log says it has no GPUs")
    check_restored(fake, initial, journals, "the end")


if __name__ == "__main__":
    sys.exit(main())
