#!/usr/bin/env python3
"""`dvfslab exporter` scraped by a real Prometheus server.

The test starts, in WORK_DIR and on the loopback address only:
- `dvfslab exporter` over the fake NVML with two H200s, the second one busy
  (DVFSLAB_FAKE_NVML_BUSY_FILE), reading the GPUs every SAMPLE_PERIOD_S;
- Debian's `prometheus` with a private config and data directory, scraping it
  every SCRAPE_INTERVAL_S.
Then it asks Prometheus's HTTP API (/api/v1/query) for each GPU's energy counter
and power and checks them against the fake's own values:
- energy: the value Prometheus holds is one the fake answered (its energy log,
  DVFSLAB_FAKE_NVML_ENERGY_LOG), to the millijoule;
- power: the fake's load is constant, so Prometheus's power equals the fake's own
  counter rate within 10 %: the counter's rise over the RATE_SPAN_S (or more)
  before the next answer in its log, divided by the time between the two answers
  on the fake GPU's clock (the log holds it). Not by the nominal sample period: a
  loaded machine stretches the exporter's interval by 20 % and more. The counter
  steps every 0.1 s, so the span is long enough for a step to be 3 % of it. The
  busy GPU reads several times the idle one.
Last, every query of the Grafana dashboard (packaging/grafana/dvfslab-exporter.json)
runs through Prometheus without error, and those that do not depend on a change
or a throttle reason return a series for each GPU. GPU 0 carries what a Slurm
prolog leaves: a change held with its journal (`dvfslab hold`), a process of Slurm
job 77 (DVFSLAB_FAKE_NVML_PROCESSES_FILE) and the prolog's applied record, so the
"savings against the default" queries return that job's series.

Usage: exporter_prometheus_test.py DVFSLAB_BINARY FAKE_NVML_LIBRARY DASHBOARD_JSON WORK_DIR.
Exit 77 (skipped) when `prometheus` is not installed (scripts/install-deps.sh --tests).
Both servers are stopped at the end, also when a check fails.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

SAMPLE_PERIOD_S = 0.5
SCRAPE_INTERVAL_S = 1
RATE_SPAN_S = 3.0
WAIT_LIMIT_S = 60


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(what, probe):
    deadline = time.monotonic() + WAIT_LIMIT_S
    while time.monotonic() < deadline:
        result = probe()
        if result:
            return result
        time.sleep(0.2)
    raise Failure(f"timed out after {WAIT_LIMIT_S} s waiting for {what}")


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return None


def query(prometheus_url, expression):
    body = http_get(f"{prometheus_url}/api/v1/query?" + urllib.parse.urlencode({"query": expression}))
    if body is None:
        return None
    answer = json.loads(body)
    check(answer["status"] == "success", f"query {expression}: {answer}")
    return answer["data"]["result"]


def energy_log(path):
    """The fake's answers per GPU index, in order: (joules, seconds on the GPU's clock)."""
    answers = {}
    with open(path) as log:
        for line in log:
            # The exporter is still appending: the last line may be half written.
            fields = line.split()
            if line.endswith("\n") and len(fields) == 4 and fields[0] == "energy":
                answers.setdefault(int(fields[1]), []).append((int(fields[2]) / 1000.0, float(fields[3])))
    return answers


def start_exporter(dvfslab, env, work):
    exporter = subprocess.Popen(
        [dvfslab, "exporter", "--listen", "127.0.0.1:0", "--interval", str(SAMPLE_PERIOD_S)],
        env=env, stdout=subprocess.PIPE, stderr=open(os.path.join(work, "exporter.err"), "w"), text=True)
    line = exporter.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
    check(found, f"the exporter printed {line!r}")
    return exporter, int(found.group(1))


def start_prometheus(prometheus, work, exporter_port):
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as out:
        out.write(f"""global:
  scrape_interval: {SCRAPE_INTERVAL_S}s
  evaluation_interval: {SCRAPE_INTERVAL_S}s
scrape_configs:
  - job_name: dvfslab
    static_configs:
      - targets: ["127.0.0.1:{exporter_port}"]
""")
    port = free_port()
    server = subprocess.Popen(
        [prometheus, f"--config.file={config}", f"--storage.tsdb.path={os.path.join(work, 'data')}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.err"), "w"))
    return server, f"http://127.0.0.1:{port}"


def hold_and_record_a_jobs_setting(dvfslab, env, work, uuid):
    """What the Slurm prolog leaves on GPU 0 for job SAVINGS_JOB_ID: a held change
    with its journal, the job's process, and the applied record beside the journal."""
    hold = subprocess.Popen([dvfslab, "hold", "--device", "0", "--power-limit", "500", "--allow-clock-changes"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in hold.stdout:
        if "holding" in line:
            break
    check(hold.poll() is None, "dvfslab hold did not start holding")
    job = subprocess.Popen(["sleep", "600"], env={**env, "SLURM_JOB_ID": SAVINGS_JOB_ID})
    with open(env["DVFSLAB_FAKE_NVML_PROCESSES_FILE"], "w") as processes:
        processes.write(f"0:{job.pid}\n")
    with open(os.path.join(env["DVFSLAB_STATE_DIR"], f"applied-{uuid}.json"), "w") as record:
        json.dump({"format": "dvfslab-applied-setting", "version": 1, "job_id": SAVINGS_JOB_ID, "user": "",
                   "gpu_uuid": uuid, "tag": "default",
                   "setting": {"sm_mhz": None, "mem_mhz": None, "power_limit_w": 500},
                   "expected_energy_saving": 0.2, "expected_time_change": 0.05}, record)
    return hold, job


def stop(process):
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def by_uuid(results):
    return {result["metric"]["uuid"]: result for result in results}


def log_spans(energy_log_path, seconds, gpus):
    """True once the fake's log holds more than `seconds` of answers for each GPU."""
    answers = energy_log(energy_log_path)
    return all(len(answers.get(index, [])) > 1 and answers[index][-1][1] - answers[index][0][1] > seconds
               for index in range(gpus))


def check_prometheus_agrees_with_the_fake(prometheus_url, energy_log_path, uuids):
    wait_for(f"{RATE_SPAN_S + 1} s of the fake's answers",
             lambda: log_spans(energy_log_path, RATE_SPAN_S + 1, len(uuids)))
    energies = wait_for("both GPUs' energy in Prometheus",
                        lambda: (lambda r: r if r and len(r) == 2 else None)(
                            query(prometheus_url, "dvfslab_gpu_energy_joules_total")))
    powers = by_uuid(query(prometheus_url, "dvfslab_gpu_power_watts"))
    energies = by_uuid(energies)
    measured = {}
    for index, uuid in enumerate(uuids):
        check(uuid in energies and uuid in powers, f"GPU {index} ({uuid}) missing: {energies} {powers}")
        scraped_at, energy = energies[uuid]["value"][0], float(energies[uuid]["value"][1])
        fake = energy_log(energy_log_path).get(index, [])
        matches = [i for i, (value, _) in enumerate(fake) if abs(value - energy) < 5e-4]
        check(matches, f"GPU {index}: Prometheus holds {energy} J, which the fake never answered")
        i = matches[-1]
        # The value may be the exporter's latest reading: wait for its next one.
        fake = wait_for(f"GPU {index}'s next reading in the fake's log",
                        lambda: (lambda f: f if len(f) > i + 1 else None)(energy_log(energy_log_path).get(index, [])))
        # The exporter has read the GPU every sample period since it started, so
        # the log reaches back further than RATE_SPAN_S (or the check says so).
        end_j, end_s = fake[i + 1]
        earlier = [(j, s) for j, s in fake[:i + 1] if s <= end_s - RATE_SPAN_S]
        check(earlier, f"GPU {index}: the fake's log spans less than {RATE_SPAN_S} s: {fake[0]} to {fake[i + 1]}")
        start_j, start_s = earlier[-1]
        fake_power = (end_j - start_j) / (end_s - start_s)
        power = float(powers[uuid]["value"][1])
        check(abs(power - fake_power) <= 0.10 * fake_power,
              f"GPU {index}: Prometheus power {power} W, the fake's counter rate {fake_power:.1f} W")
        measured[index] = power
        print(f"exporter_prometheus_test: GPU {index} {uuid}: {energy:.3f} J (answered by the fake), "
              f"{power:.1f} W (the fake's counter rate {fake_power:.1f} W over {end_s - start_s:.2f} s), scraped at {scraped_at}")
    check(measured[1] > 3 * measured[0], f"the busy GPU 1 reads {measured[1]} W, the idle GPU 0 {measured[0]} W")


# Grafana's variables as the dashboard's defaults ("All") and a short range expand them.
DASHBOARD_VARIABLES = {"$instance": ".*", "$uuid": ".*", "$__range": "5s", "$__rate_interval": "5s"}
# Queries whose series exist only while something holds: no throttle reason on the
# fake's GPUs at default settings; a change and a job on GPU 0 only.
MAY_BE_EMPTY = ("dvfslab_gpu_setting_changed", "dvfslab_gpu_throttle_reason", "dvfslab_job_energy_joules_total")
# Queries of the prolog's applied record: a series for job 77 on GPU 0.
FROM_THE_APPLIED_RECORD = ("dvfslab_gpu_applied_expected_energy_saving_ratio",
                           "dvfslab_gpu_applied_expected_time_change_ratio",
                           "dvfslab_job_estimated_energy_saved_joules_total")
SAVINGS_JOB_ID = "77"


def check_dashboard_queries(prometheus_url, dashboard_path):
    with open(dashboard_path) as dashboard_file:
        dashboard = json.load(dashboard_file)
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    for expression in expressions:
        for variable, value in DASHBOARD_VARIABLES.items():
            expression = expression.replace(variable, value)
        if any(name in expression for name in FROM_THE_APPLIED_RECORD):
            series = wait_for(f"dashboard query {expression} to give job {SAVINGS_JOB_ID}'s series",
                              lambda: (lambda r: r if r and float(r[0]["value"][1]) > 0 else None)(
                                  query(prometheus_url, expression)))
            check([result["metric"]["job_id"] for result in series] == [SAVINGS_JOB_ID],
                  f"dashboard query {expression}: {series}")
        elif any(name in expression for name in MAY_BE_EMPTY):
            check(query(prometheus_url, expression) is not None, f"dashboard query {expression}: no answer")
        else:
            # A range query needs that range of scrapes behind it: wait for them.
            wait_for(f"dashboard query {expression} to give a series per GPU",
                     lambda: (lambda r: r if r and len(r) >= 2 else None)(query(prometheus_url, expression)))
    print(f"exporter_prometheus_test: the dashboard's {len(expressions)} queries run in Prometheus")


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    dvfslab, fake_nvml, dashboard, work = (os.path.abspath(arg) for arg in sys.argv[1:])
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        print("exporter_prometheus_test: skipped: no prometheus (scripts/install-deps.sh --tests installs it)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with open(os.path.join(work, "busy"), "w") as busy:
        busy.write("1\n")
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("DVFSLAB_") and name not in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")}
    env.update(DVFSLAB_NVML_LIBRARY=fake_nvml, DVFSLAB_FAKE_NVML_GPUS="h200,h200",
               DVFSLAB_FAKE_NVML_UUID_SALT=f"prometheus-test-{os.getpid()}",
               DVFSLAB_FAKE_NVML_BUSY_FILE=os.path.join(work, "busy"),
               DVFSLAB_STATE_DIR=os.path.join(work, "state"))
    info = subprocess.run([dvfslab, "info", "--device", "all", "--json"], env=env, capture_output=True, text=True)
    check(info.returncode == 0, f"dvfslab info: {info.stderr}")
    uuids = [gpu["uuid"] for gpu in json.loads(info.stdout)["devices"]]
    check(len(uuids) == 2, f"dvfslab info lists {uuids}")
    env["DVFSLAB_FAKE_NVML_ENERGY_LOG"] = os.path.join(work, "energy.log")
    env["DVFSLAB_FAKE_NVML_PROCESSES_FILE"] = os.path.join(work, "processes")

    exporter = server = hold = job = None
    try:
        hold, job = hold_and_record_a_jobs_setting(dvfslab, env, work, uuids[0])
        exporter, exporter_port = start_exporter(dvfslab, env, work)
        server, prometheus_url = start_prometheus(prometheus, work, exporter_port)
        wait_for("Prometheus to be ready", lambda: http_get(f"{prometheus_url}/-/ready"))
        up = wait_for("the scrape target to be up",
                      lambda: (lambda r: r if r and r[0]["value"][1] == "1" else None)(
                          query(prometheus_url, 'up{job="dvfslab"}')))
        print(f"exporter_prometheus_test: Prometheus scrapes the exporter: {up[0]['metric']}")
        check_prometheus_agrees_with_the_fake(prometheus_url, env["DVFSLAB_FAKE_NVML_ENERGY_LOG"], uuids)
        check_dashboard_queries(prometheus_url, dashboard)
    except Failure as failure:
        print(f"exporter_prometheus_test: FAILED: {failure}", file=sys.stderr)
        for name in ("exporter.err", "prometheus.err"):
            path = os.path.join(work, name)
            if os.path.exists(path):
                print(f"--- {name}:\n" + open(path).read()[-3000:], file=sys.stderr)
        return 1
    finally:
        stop(server)
        stop(exporter)
        stop(hold)
        stop(job)
    check(exporter.returncode == 0, f"the exporter exited {exporter.returncode} on SIGTERM")
    print("exporter_prometheus_test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
