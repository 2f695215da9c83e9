"""Multi-process training on 127.0.0.1 for the tests: parameter servers as `tensorweave server`
processes, workers running scripts/replica_trainer.py; bounded waits, and clean-up that kills
every process group whatever the test did."""
import json
import os
import signal
import subprocess
import sys
import time

from tests.distributed.cluster_util import REPO, ServerProcesses

TRAINER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts",
                       "replica_trainer.py")


class _Servers(ServerProcesses):
    def restart(self, job, index):
        """Starts the task again on its address (an empty process: no variables)."""
        self.processes[(job, index)] = process = self._start(job, index, 1)
        self._wait_ready((job, index), process)


class TrainingCluster:
    def __init__(self, workers, ps=1):
        self.servers = _Servers({"ps": ps, "worker": workers},
                                skip={("worker", i) for i in range(workers)})
        self.cluster = self.servers.cluster
        self.workers = {}

    def start_worker(self, index, *args):
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=REPO)
        env.pop("TF_CONFIG", None)
        process = subprocess.Popen(
            [sys.executable, TRAINER, "--cluster", json.dumps(self.cluster), "--task",
             str(index), *[str(a) for a in args]],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        self.workers[index] = process
        return process

    def wait_for_progress(self, index, runs, timeout=60):
        """Reads worker `index`'s output until it reports `runs` steps."""
        process = self.workers[index]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise AssertionError(f"worker {index} exited before {runs} steps")
            if line.startswith(b"{") and json.loads(line).get("progress", 0) >= runs:
                return
        raise AssertionError(f"worker {index} did not reach {runs} steps in {timeout} s")

    def result(self, index, timeout=90, output=None):
        """The worker's final JSON line (it must exit with status 0); its whole output is
        appended to the list `output` if given."""
        process = self.workers[index]
        text = process.communicate(timeout=timeout)[0].decode(errors="replace")
        if output is not None:
            output.append(text)
        lines = [line for line in text.splitlines() if line.startswith("{") and '"runs"' in line]
        assert process.returncode == 0 and lines, text[-3000:]
        return json.loads(lines[-1])

    def kill_worker(self, index):
        process = self.workers[index]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)

    def close(self):
        for process in self.workers.values():
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                pass
            if process.stdout:
                process.stdout.close()
        self.servers.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
