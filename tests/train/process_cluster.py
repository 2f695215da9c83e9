"""Multi-process training on 127.0.0.1 for the tests: parameter servers as `tensorweave server`
processes, workers running scripts/replica_trainer.py; bounded waits, and clean-up that kills
every process group whatever the test did."""
import json
import os
import select
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


def _record(line, key):
    """The JSON object on `line` if it has `key` (other lines are the workers' logs)."""
    if isinstance(line, bytes):
        line = line.decode(errors="replace")
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) and key in record else None


class _WorkerOutput:
    """What a worker printed so far, read without blocking past a deadline; keeps every byte
    (the test may look for log lines) and the latest progress line's runs and global step."""

    def __init__(self, process):
        self.process = process
        self.text = b""
        self._pending = b""
        self.runs, self.step = 0, -1

    def read(self, timeout):
        """Reads what arrives within `timeout` seconds; False once the output ended."""
        ready, _, _ = select.select([self.process.stdout], [], [], max(timeout, 0.0))
        if not ready:
            return True
        chunk = os.read(self.process.stdout.fileno(), 1 << 16)
        if not chunk:
            return False
        self.text += chunk
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            progress = _record(line, "progress")
            if progress:
                self.runs, self.step = progress["progress"], progress["step"]
        return True

    def drain(self):
        """Takes in everything already printed (nothing waits for more)."""
        while select.select([self.process.stdout], [], [], 0.0)[0] and self.read(0.0):
            pass


class TrainingCluster:
    def __init__(self, workers, ps=1):
        self.servers = _Servers({"ps": ps, "worker": workers},
                                skip={("worker", i) for i in range(workers)})
        self.cluster = self.servers.cluster
        self.workers = {}
        self.outputs = {}

    def start_worker(self, index, *args):
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=REPO)
        env.pop("TF_CONFIG", None)
        process = subprocess.Popen(
            [sys.executable, TRAINER, "--cluster", json.dumps(self.cluster), "--task",
             str(index), *[str(a) for a in args]],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        self.workers[index] = process
        self.outputs[index] = _WorkerOutput(process)
        return process

    def wait_for_progress(self, index, runs, timeout=60):
        """Reads worker `index`'s output until it reports `runs` runs."""
        output = self.outputs[index]
        deadline = time.monotonic() + timeout
        while output.runs < runs:
            if time.monotonic() > deadline:
                raise AssertionError(f"worker {index} did not reach {runs} runs in {timeout} s:"
                                     f"\n{output.text[-3000:].decode(errors='replace')}")
            if not output.read(deadline - time.monotonic()):
                raise AssertionError(f"worker {index} exited before {runs} runs:\n"
                                     f"{output.text[-3000:].decode(errors='replace')}")
        output.drain()

    def runs(self, index):
        """Worker `index`'s runs as it last reported them (everything printed is read)."""
        self.outputs[index].drain()
        return self.outputs[index].runs

    def set_last_step(self, path, margin):
        """Ends training `margin` global steps after the latest step any worker reported
        (workers started with --last_step_file path). Returns that last step."""
        for output in self.outputs.values():
            output.drain()
        last_step = max(output.step for output in self.outputs.values()) + margin
        with open(f"{path}.tmp", "w") as handle:
            handle.write(str(last_step))
        os.replace(f"{path}.tmp", path)
        return last_step

    def result(self, index, timeout=90, output=None):
        """The worker's final JSON line (it must exit with status 0); its whole output is
        appended to the list `output` if given."""
        process = self.workers[index]
        rest = process.communicate(timeout=timeout)[0]
        text = (self.outputs[index].text + rest).decode(errors="replace")
        if output is not None:
            output.append(text)
        records = [r for r in (_record(line, "runs") for line in text.splitlines()) if r]
        assert process.returncode == 0 and records, text[-3000:]
        return records[-1]

    def kill_worker(self, index):
        process = self.workers.pop(index)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
        self.outputs.pop(index).drain()
        process.stdout.close()

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
