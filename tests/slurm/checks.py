"""What the Slurm test scripts share besides the cluster: the failure a check
raises, and running a command that must exit as expected."""
import subprocess


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(args, env=None, expect=0):
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    if expect is not None and result.returncode != expect:
        raise Failure(f"{' '.join(args)} exited {result.returncode}, expected {expect}:\n{result.stdout}{result.stderr}")
    return result
