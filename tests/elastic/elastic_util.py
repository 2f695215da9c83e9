"""An elastic launch as a real process for tests: its output read as it comes, waits with
deadlines, and a clean-up that leaves no process behind (the launcher's children die with it:
launch.py's PR_SET_PDEATHSIG; every pid a rank printed is checked gone)."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")


def environment():
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=REPO, OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    for name in list(env):
        if name.startswith(("TENSORWEAVE_", "PMI_", "OMPI_", "HOROVOD_")) or name == "TF_CONFIG":
            del env[name]
    return env


class Launch:
    """`argv` run as a process whose output lines are collected with their arrival time."""

    def __init__(self, argv, env=None):
        self.lines = []
        self._changed = threading.Condition()
        self.started = time.monotonic()
        self.process = subprocess.Popen(argv, env=env or environment(), cwd=REPO,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for raw in iter(self.process.stdout.readline, b""):
            with self._changed:
                self.lines.append((time.monotonic(), raw.decode(errors="replace").rstrip()))
                self._changed.notify_all()
        self.process.stdout.close()

    def wait_for(self, pattern, timeout, count=1):
        """The first `count` matches of regex `pattern` (re.Match objects), waiting for them."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [m for m in (regex.search(text) for _, text in self.lines) if m]
                if len(found) >= count:
                    return found[:count]
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.process.poll() is not None and
                                      not self._reader.is_alive()):
                    raise AssertionError(f"no {count} x {pattern!r} within {timeout} s:\n" +
                                         self.text())
                self._changed.wait(min(remaining, 0.2))

    def finish(self, timeout):
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the launch did not end within {timeout} s:\n" +
                                 self.text()) from None
        self._reader.join(5.0)
        return self.process.returncode

    def text(self):
        return "\n".join(text for _, text in self.lines)

    def results(self):
        return [json.loads(text.split("RESULT ", 1)[1]) for _, text in self.lines
                if "RESULT " in text]

    def close(self):
        """Stops the launcher if it still runs (its ranks die with it) and checks that no
        process a rank reported is left."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self._reader.join(5.0)
        pids = {int(p) for p in re.findall(r"pid (\d+)", self.text())}
        deadline = time.monotonic() + 10.0
        while pids and time.monotonic() < deadline:
            pids = {pid for pid in pids if _alive(pid)}
            time.sleep(0.1)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        assert not pids, f"ranks {sorted(pids)} outlived the launcher"


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def elastic_run(*options, script="elastic_train.py", script_args=()):
    """A Launch of `tensorweave run --elastic OPTIONS python scripts/SCRIPT ARGS`."""
    argv = [sys.executable, "-m", "tensorweave.cli.main", "run", "--elastic", *options,
            sys.executable, os.path.join(SCRIPTS, script), *[str(a) for a in script_args]]
    return Launch(argv)


def predicted(sizes, start=10.0, learning_rate=0.25):
    """(weight, counter) of elastic_train.py after the committed steps of `sizes`: each step
    moves the weight a `learning_rate` of the way to (size - 1) / 2 (the ranks' mean target)
    and adds the size to the counter."""
    weight = start
    for size in sizes:
        weight = weight - learning_rate * (weight - (size - 1) / 2.0)
    return weight, float(sum(sizes))
