"""A private single-node Slurm cluster (munged + slurmctld + slurmd) in one directory.

Nothing system-wide is read or written: munged gets its own socket and key, the
Slurm daemons their own slurm.conf (SLURM_CONF), ports and spool directories, and
everything listens on the loopback address only. Needs root (slurmd runs jobs as
their submitter) and Debian's slurm-wlm and munge packages.

    with PrivateCluster(directory) as cluster:
        subprocess.run(["sbatch", ...], env=cluster.env)

`gres` gives the node generic resources ("gpu:2") with `gres_conf` as its
gres.conf lines; `extra_config` adds slurm.conf lines (Prolog=, Epilog=, ...).
"""
import os
import secrets
import signal
import socket
import subprocess
import time


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _read_pid(path):
    try:
        with open(path) as pid_file:
            return int(pid_file.read().strip())
    except (OSError, ValueError):
        return None


class PrivateCluster:
    def __init__(self, directory, cpus=2, gres=None, gres_conf=(), extra_config=()):
        self.directory = os.path.abspath(directory)
        self.cpus = cpus
        self.gres = gres
        self.gres_conf = list(gres_conf)
        self.extra_config = list(extra_config)
        self.node = socket.gethostname().split(".")[0]
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.directory, "slurm.conf"))
        self.pid_files = [os.path.join(self.directory, name) for name in ("slurmd.pid", "slurmctld.pid", "munged.pid")]

    def _path(self, name):
        return os.path.join(self.directory, name)

    def _write_config(self):
        for sub in ("state", "spool", "log"):
            os.makedirs(self._path(sub), exist_ok=True)
        controller_port, node_port = _free_port(), _free_port()
        lines = [
            "ClusterName=dvfslabtest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={controller_port}",
            f"SlurmdPort={node_port}",
            "AuthType=auth/munge",
            f"AuthInfo=socket={self._path('munge.sock')}",
            "CredType=cred/munge",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={self._path('state')}",
            f"SlurmdSpoolDir={self._path('spool')}",
            f"SlurmctldPidFile={self._path('slurmctld.pid')}",
            f"SlurmdPidFile={self._path('slurmd.pid')}",
            f"SlurmctldLogFile={self._path('log/slurmctld.log')}",
            f"SlurmdLogFile={self._path('log/slurmd.log')}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            # Finished jobs stay visible to scontrol for an hour (no accounting here).
            "MinJobAge=3600",
            "SchedulerType=sched/backfill",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory=1000 State=UNKNOWN"
            + (f" Gres={self.gres}" if self.gres else ""),
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
        if self.gres:
            lines.append("GresTypes=" + ",".join(sorted({item.split(":")[0] for item in self.gres.split(",")})))
        lines += self.extra_config
        with open(self._path("slurm.conf"), "w") as conf:
            conf.write("\n".join(lines) + "\n")
        if self.gres:
            # slurmd reads gres.conf beside slurm.conf.
            with open(self._path("gres.conf"), "w") as conf:
                conf.write("".join(line + "\n" for line in self.gres_conf))

    def _start_munge(self):
        key = self._path("munge.key")
        with open(key, "wb") as key_file:
            key_file.write(secrets.token_bytes(1024))
        os.chmod(key, 0o400)
        subprocess.run(["munged", f"--socket={self._path('munge.sock')}", f"--key-file={key}",
                        f"--pid-file={self._path('munged.pid')}", f"--log-file={self._path('munged.log')}",
                        f"--seed-file={self._path('munge.seed')}"], check=True)

    def start(self):
        os.makedirs(self.directory, exist_ok=True)
        self._write_config()
        self._start_munge()
        subprocess.run(["slurmctld", "-i"], check=True, env=self.env)
        subprocess.run(["slurmd"], check=True, env=self.env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True)
            if state.returncode == 0 and state.stdout.strip() in ("idle", "mixed", "allocated"):
                return
            time.sleep(0.5)
        raise RuntimeError(f"the private Slurm node did not become idle in 30 s; see {self._path('log')}")

    def stop(self):
        """Stops every daemon this cluster started, each by the pid in its pid file."""
        for pid_file in self.pid_files:
            pid = _read_pid(pid_file)
            if pid is None:
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
