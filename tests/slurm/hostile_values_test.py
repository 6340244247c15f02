#!/usr/bin/env python3
"""`dvfslab slurm submit` with hostile values against a real Slurm (findings M6, M7, H4).

A private single-node cluster (private_cluster.py) checks:
- M7: a line break in --partition, --account, --time, --gres, --constraint or --out is
  refused with one error line (exit 2) before anything is written or submitted;
- M6: an --out directory whose name holds spaces, '%', '#', quotes, $(...), backticks
  and ';' gives scripts that `bash -n` and `sbatch --test-only` accept; submitted for
  real, with an --account holding a space, every shard and the merge succeed, the
  logs are where `slurm status` looks (DIR/shard-i.log, not a %-expanded name) and
  no command hidden in the name ran;
- H4: the `--gpu-freq` option `analyze --emit slurm` prints for the merged database
  is one sbatch accepts (`sbatch --test-only`), and the `--emit nvidia-smi` text
  passes `sh -n`.

Usage: hostile_values_test.py DVFSLAB_BINARY WORK_DIR. Exit 77 (skipped) when not root.
"""
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Failure, check, run  # noqa: E402
from fleet_test import PLAN, fleet_status, wait_for  # noqa: E402
from private_cluster import PrivateCluster  # noqa: E402

SHELL_PAYLOAD = "x $(touch pwned-subst) `touch pwned-tick` 'q' \"dq\" %j %% #1 ;touch pwned-semi"


def job_count(env):
    return len(run(["squeue", "-h", "-o", "%i"], env=env).stdout.split())


def pwned_files(directory):
    return [os.path.join(root, name) for root, _, names in os.walk(directory) for name in names
            if name.startswith("pwned")]


def check_line_breaks_refused(dvfslab, plan, work, env):
    jobs_before = job_count(env)
    for option in ("--partition", "--account", "--time", "--gres", "--constraint", "--out"):
        out = os.path.join(work, "refused")
        value = (out if option == "--out" else "debug") + "\ntouch pwned-newline"
        args = [dvfslab, "slurm", "submit", plan, "--shards", "2", "--device", "sim:v100"]
        if option != "--out":
            args += ["--out", out]
        result = run(args + [option, value], env=env, expect=2)
        lines = result.stderr.splitlines()
        check(len(lines) == 1 and lines[0].startswith(f"dvfslab: error: {option} '"),
              f"M7 {option}: stderr was {result.stderr!r}")
        check(not os.path.exists(out), f"M7 {option}: the directory was written")
    check(job_count(env) == jobs_before, "M7: a refused submission queued a job")
    print("hostile_values_test: M7 a line break in each of 6 options refused, nothing submitted")


def check_hostile_out_directory(dvfslab, plan, work, env):
    fleet = os.path.join(work, "fleet " + SHELL_PAYLOAD)
    run([dvfslab, "slurm", "submit", plan, "--shards", "2", "--out", fleet, "--device", "sim:v100", "--time", "5",
         "--account", "lab account"], env=env)
    for script in ("shards.sbatch", "merge.sbatch"):
        path = os.path.join(fleet, script)
        run(["bash", "-n", path])
        tested = run(["sbatch", "--test-only", path], env=env)
        check("to start at" in tested.stderr, f"M6 sbatch --test-only {script}: {tested.stderr!r}")

    def merged():
        status = fleet_status(dvfslab, fleet, env)
        if status["merge"]["state"] in ("failed", "cancelled"):
            raise Failure(f"M6: the merge failed: {status}")
        return status if status["merge"]["state"] == "done" else None

    status = wait_for("the merge of the fleet in a hostile directory", merged, env)
    check(all(shard["state"] == "done" for shard in status["shards"]), f"M6: every shard should be done: {status}")
    for shard in (1, 2):
        log = os.path.join(fleet, f"shard-{shard}.log")
        check(os.path.isfile(log), f"M6: shard {shard}'s log is not at {log!r}: {sorted(os.listdir(fleet))}")
    check(os.path.isfile(os.path.join(fleet, "merge.log")), "M6: the merge's log is missing")
    check(status["merged_database"] == os.path.join(fleet, "merged.sqlite"), f"M6: merged database: {status}")
    print("hostile_values_test: M6 fleet in a directory with spaces, %, #, quotes and shell syntax: 2 shards "
          "and the merge done, logs in place")
    return status["merged_database"]


def check_emitted_commands(dvfslab, database, work, env):
    options = [line for line in run([dvfslab, "analyze", database, "--emit", "slurm"]).stdout.splitlines()
               if line.startswith("--gpu-freq=")]
    check(options, "H4: analyze --emit slurm printed no --gpu-freq option")
    for option in options:
        tested = run(["sbatch", "--test-only", option, "--wrap", "true"], env=env)
        check("to start at" in tested.stderr, f"H4 sbatch --test-only {option}: {tested.stderr!r}")
    script = os.path.join(work, "apply.sh")
    with open(script, "w") as text:
        text.write(run([dvfslab, "analyze", database, "--emit", "nvidia-smi"]).stdout)
    run(["sh", "-n", script])
    print(f"hostile_values_test: H4 {len(options)} emitted --gpu-freq options accepted by sbatch --test-only")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    if os.geteuid() != 0:
        print("hostile_values_test: skipped: the private Slurm cluster needs root")
        return 77
    dvfslab, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plan = os.path.join(work, "plan.toml")
    with open(plan, "w") as plan_file:
        plan_file.write(PLAN)
    # ctest's timeout and Ctrl-C end the test with SIGTERM/SIGINT: stop the daemons then too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("hostile_values_test: terminated"))
    # The jobs run in the directory they were submitted from: a command that escaped
    # its quotes would leave its file there.
    os.chdir(work)
    with PrivateCluster(os.path.join(work, "cluster")) as cluster:
        check_line_breaks_refused(dvfslab, plan, work, cluster.env)
        merged = check_hostile_out_directory(dvfslab, plan, work, cluster.env)
        check_emitted_commands(dvfslab, merged, work, cluster.env)
    check(not pwned_files(work), f"a command hidden in a value ran: {pwned_files(work)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as failure:
        print(f"hostile_values_test: FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
