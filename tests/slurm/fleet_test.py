#!/usr/bin/env python3
"""`dvfslab slurm` against a real Slurm: a private single-node cluster runs a 4-shard
array job of a small plan on a simulated GPU plus the merge job; one shard fails
(its database path is a directory), shows as failed in `slurm status`, and
`slurm resubmit` reruns only it, then the merge. The merged database must hold the
same points and measurements as the same shards run without Slurm, and the same
points as an unsharded sweep. A 2-shard search fleet (`--command search`) measures
the same points as its shards searched without Slurm. A fleet submitted with
`--sbatch-arg=--hold` stays pending until `slurm cancel` cancels it. A missing
sbatch gives one clear error (exit 10).

Usage: fleet_test.py DVFSLAB_BINARY WORK_DIR. Exit 77 (skipped) when not root.
The daemons are stopped at the end, also when a check fails or on SIGTERM/SIGINT.
"""
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Failure, check, run  # noqa: E402
from private_cluster import PrivateCluster  # noqa: E402

SHARDS = 4
WAIT_LIMIT_S = 60  # per wait; the whole test stays well under ctest's 180 s
PLAN = """[plan]
name = "slurm fleet test"
devices = ["sim:v100"]
[knobs]
sm_mhz = { count = 4 }
[[cases]]
workloads = ["resnet50", "alexnet"]
batch_sizes = [32]
modes = ["train"]
[measure]
warmup_iterations = 2
repetitions = 1
max_repetitions = 1
settle_s = 0.1
order = "ascending"
include_default = true
drift_check = false
"""
# Columns that name a measurement; run ids, timestamps and the order inside a
# shard differ between a sharded and an unsharded sweep by design.
KEY = ["gpu", "workload", "batch", "mode", "precision", "sm_mhz", "mem_mhz", "power_limit_w", "repetition", "role"]
IGNORED = {"run_id", "recorded_at", "order_index"}


def export_rows(dvfslab, database):
    text = run([dvfslab, "export", database]).stdout
    rows = {}
    for row in csv.DictReader(io.StringIO(text)):
        key = tuple(row[column] for column in KEY)
        check(key not in rows, f"{database}: measurement {key} twice")
        rows[key] = {column: value for column, value in row.items() if column not in IGNORED}
    return rows


def wait_for(description, predicate, env):
    deadline = time.monotonic() + WAIT_LIMIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    queue = subprocess.run(["squeue"], env=env, capture_output=True, text=True).stdout
    raise Failure(f"timed out after {WAIT_LIMIT_S} s waiting for {description}; squeue:\n{queue}")


def fleet_status(dvfslab, directory, env):
    return json.loads(run([dvfslab, "slurm", "status", directory, "--json"], env=env).stdout)


def reference_databases(dvfslab, work, plan):
    """The same plan without Slurm: its four shards merged, and unsharded."""
    shards = []
    for shard in range(1, SHARDS + 1):
        database = os.path.join(work, f"local-shard-{shard}.sqlite")
        run([dvfslab, "sweep", plan, "--shard", f"{shard}/{SHARDS}", "--db", database])
        shards.append(database)
    merged = os.path.join(work, "local-merged.sqlite")
    run([dvfslab, "merge", merged, *shards])
    unsharded = os.path.join(work, "unsharded.sqlite")
    run([dvfslab, "sweep", plan, "--db", unsharded])
    return merged, unsharded


def check_missing_sbatch(dvfslab, plan, work):
    no_slurm = dict(os.environ, PATH=os.path.join(work, "empty-path"))
    result = run([dvfslab, "slurm", "submit", plan, "--shards", "2", "--out", os.path.join(work, "nowhere")],
                 env=no_slurm, expect=10)
    lines = result.stderr.strip().splitlines()
    check(len(lines) == 1 and "sbatch is not on PATH" in lines[0], f"missing sbatch: stderr was {result.stderr!r}")
    check(not os.path.exists(os.path.join(work, "nowhere")), "missing sbatch: the directory was written anyway")


def run_fleet(dvfslab, work, plan, env):
    fleet = os.path.join(work, "fleet")
    # The cause of shard 2's failure: its database path is a directory.
    os.makedirs(os.path.join(fleet, "shard-2.sqlite"))
    run([dvfslab, "slurm", "submit", plan, "--shards", str(SHARDS), "--out", fleet, "--device", "sim:v100",
         "--time", "5"], env=env)
    first = json.load(open(os.path.join(fleet, "jobs.json")))

    def shards_ended():
        status = fleet_status(dvfslab, fleet, env)
        ended = all(shard["state"] not in ("pending", "running") for shard in status["shards"])
        return status if ended else None

    status = wait_for("the first array job", shards_ended, env)
    states = {shard["shard"]: shard for shard in status["shards"]}
    check(states[2]["state"] == "failed", f"shard 2 should have failed: {states[2]}")
    check(states[2]["exit_code"] == 8, f"shard 2 should exit with the store error 8: {states[2]}")
    check("shard-2.sqlite" in states[2]["reason"], f"shard 2's reason should name its database: {states[2]}")
    for shard in (1, 3, 4):
        check(states[shard]["state"] == "done", f"shard {shard} should be done: {states[shard]}")
    check(status["merge"]["state"] == "pending", f"the merge should wait forever: {status['merge']}")
    text = run([dvfslab, "slurm", "status", fleet], env=env).stdout
    check("dvfslab slurm resubmit" in text, f"status should say how to rerun the failed shard:\n{text}")

    os.rmdir(os.path.join(fleet, "shard-2.sqlite"))
    resubmitted = run([dvfslab, "slurm", "resubmit", fleet], env=env).stdout
    check("Resubmitted shard 2 as array job" in resubmitted, f"resubmit output:\n{resubmitted}")
    jobs = json.load(open(os.path.join(fleet, "jobs.json")))
    check(jobs["arrays"][1]["shards"] == [2], f"only shard 2 should be resubmitted: {jobs}")
    old_merge = run(["scontrol", "show", "job", "-o", first["merges"][0]], env=env).stdout
    check("JobState=CANCELLED" in old_merge, f"the old merge should be cancelled: {old_merge}")

    def merged():
        status = fleet_status(dvfslab, fleet, env)
        if status["merge"]["state"] in ("failed", "cancelled"):
            raise Failure(f"the merge job failed: {status['merge']}")
        return status if status["merge"]["state"] == "done" else None

    status = wait_for("the merge job", merged, env)
    check(all(shard["state"] == "done" for shard in status["shards"]), f"every shard should be done: {status}")
    check(status["shards"][1]["job_id"] == f"{jobs['arrays'][1]['job_id']}_2", f"shard 2's job: {status}")
    check(status["merged_database"] == os.path.join(fleet, "merged.sqlite"), f"merged database: {status}")
    return status["merged_database"]


def run_search_fleet(dvfslab, work, plan, env):
    """`--command search`: each shard's sweep with a strategy, merged like a sweep's; the
    same points as the shards searched without Slurm."""
    fleet = os.path.join(work, "search-fleet")
    run([dvfslab, "slurm", "submit", plan, "--shards", "2", "--command", "search", "--strategy", "golden",
         "--out", fleet, "--device", "sim:v100", "--time", "5"], env=env)

    def merged():
        status = fleet_status(dvfslab, fleet, env)
        if status["merge"]["state"] in ("failed", "cancelled"):
            raise Failure(f"the search fleet's merge failed: {status}")
        return status if status["merge"]["state"] == "done" else None

    status = wait_for("the search fleet's merge", merged, env)
    local = []
    for shard in (1, 2):
        database = os.path.join(work, f"local-search-{shard}.sqlite")
        run([dvfslab, "sweep", plan, "--strategy", "golden", "--shard", f"{shard}/2", "--db", database])
        local.append(database)
    local_merged = os.path.join(work, "local-search-merged.sqlite")
    run([dvfslab, "merge", local_merged, *local])
    on_slurm, alone = export_rows(dvfslab, status["merged_database"]), export_rows(dvfslab, local_merged)
    check(set(on_slurm) == set(alone), "the search fleet measured other points than the same shards without Slurm")
    check({key[1] for key in on_slurm} == {"resnet50", "alexnet"}, f"every case searched: {sorted(on_slurm)}")
    print(f"fleet_test: search fleet (golden, 2 shards) measured the same {len(on_slurm)} windows as without Slurm")


def run_held_and_cancelled_fleet(dvfslab, work, plan, env):
    """`--sbatch-arg` reaches sbatch (--hold keeps every job pending) and jobs.json;
    `slurm cancel` cancels the array and the merge; `resubmit` passes the option again."""
    fleet = os.path.join(work, "held-fleet")
    run([dvfslab, "slurm", "submit", plan, "--shards", "2", "--out", fleet, "--device", "sim:v100",
         "--sbatch-arg=--hold", "--sbatch-arg=--job-name=held fleet"], env=env)
    jobs = json.load(open(os.path.join(fleet, "jobs.json")))
    check(jobs["sbatch_args"] == ["--hold", "--job-name=held fleet"], f"jobs.json keeps the sbatch options: {jobs}")
    for job_id in (jobs["arrays"][0]["job_id"], jobs["merges"][0]):
        shown = run(["scontrol", "show", "job", "-o", job_id], env=env).stdout
        check("Reason=JobHeldUser" in shown and "JobName=held fleet" in shown, f"job {job_id} held, named: {shown}")
    cancelled = run([dvfslab, "slurm", "cancel", fleet], env=env).stdout
    check("Cancelled the jobs of" in cancelled, f"cancel output:\n{cancelled}")
    status = fleet_status(dvfslab, fleet, env)
    check(all(shard["state"] == "cancelled" for shard in status["shards"]), f"shards cancelled: {status}")
    check(status["merge"]["state"] == "cancelled", f"merge cancelled: {status}")
    # Cancelling again: every job has finished, nothing to do and no error.
    run([dvfslab, "slurm", "cancel", fleet], env=env)
    resubmitted = run([dvfslab, "slurm", "resubmit", fleet], env=env).stdout
    jobs = json.load(open(os.path.join(fleet, "jobs.json")))
    shown = run(["scontrol", "show", "job", "-o", jobs["arrays"][1]["job_id"]], env=env).stdout
    check("Reason=JobHeldUser" in shown, f"the resubmitted array is held too: {resubmitted}{shown}")
    run([dvfslab, "slurm", "cancel", fleet], env=env)
    print("fleet_test: --sbatch-arg=--hold kept the fleet pending; slurm cancel cancelled its array and merge")


def compare(dvfslab, slurm_merged, local_merged, unsharded):
    on_slurm = export_rows(dvfslab, slurm_merged)
    local = export_rows(dvfslab, local_merged)
    check(on_slurm == local, "the Slurm fleet's merged database differs from the same shards run without Slurm")
    alone = export_rows(dvfslab, unsharded)
    check(set(on_slurm) == set(alone), "the fleet measured other points than an unsharded sweep")
    largest = 0.0
    for key, row in on_slurm.items():
        for column in ("iterations", "items"):
            check(row[column] == alone[key][column], f"{key}: {column} differs from the unsharded sweep")
        # Power and energy depend on the simulated GPU's temperature, which carries
        # over from the points measured before on the same GPU: a shard starts cold.
        relative = abs(float(row["energy_j"]) / float(alone[key]["energy_j"]) - 1)
        largest = max(largest, relative)
    check(largest < 0.10, f"energy differs by {largest:.1%} from the unsharded sweep")
    print(f"fleet_test: {len(on_slurm)} measurements equal to the shards run without Slurm; against the "
          f"unsharded sweep same points, iterations and items, energy within {largest:.2%}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    if os.geteuid() != 0:
        print("fleet_test: skipped: the private Slurm cluster needs root")
        return 77
    dvfslab, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "empty-path"))
    plan = os.path.join(work, "plan.toml")
    with open(plan, "w") as plan_file:
        plan_file.write(PLAN)
    check_missing_sbatch(dvfslab, plan, work)
    local_merged, unsharded = reference_databases(dvfslab, work, plan)
    # ctest's timeout and Ctrl-C end the test with SIGTERM/SIGINT: stop the daemons then too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("fleet_test: terminated"))
    with PrivateCluster(os.path.join(work, "cluster")) as cluster:
        slurm_merged = run_fleet(dvfslab, work, plan, cluster.env)
        run_search_fleet(dvfslab, work, plan, cluster.env)
        run_held_and_cancelled_fleet(dvfslab, work, plan, cluster.env)
    compare(dvfslab, slurm_merged, local_merged, unsharded)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as failure:
        print(f"fleet_test: FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
