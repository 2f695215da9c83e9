"""Elastic allreduce (issue 18): how long from a rank's death to the survivors' next finished
step, against what a restart of the job would cost at least (its cold start).

    python benchmarks/bench_elastic.py [--rounds 5 --ranks 3]

Each round launches `tensorweave run --elastic -np RANKS --min-np 2` on
tests/elastic/scripts/elastic_train.py (a scalar SGD and a counter, two allreduces per step,
commit every 3 steps, 50 ms sleep per step), waits for step 7 of rank 1, kills that process
with SIGKILL and times, from the kill, the survivors' lines (tests/elastic/elastic_util.py
reads them as they come):
  re-formed    "reset at step K": the failure seen, communicator closed, the launcher noticed
               the death, the rendezvous formed the next generation, the new ring connected;
  synced       rank 0's committed variables and Python state broadcast (state.sync());
  resumed      the first step of the new generation finished (the rolled-back step redone).
The reference, measured in the same rounds: the cold start of the same job (launch to its
first finished step), the least a restart from a checkpoint would cost; and the median
interval between two steps before the kill (50 ms of it is the script's sleep).
Horovod's documentation gives no number for its own recovery time, so none is compared.

Then the parameter-server side: `tensorweave launch --ps 1 --workers 1 --max-workers 2` on
tests/elastic/scripts/ps_task.py (async SGD); once worker 0 is past global step 5, `tensorweave
launch --add-worker` and the time from that command's return to the new worker's first
finished step (process start, imports, its server, session creation against the running ps),
against the launch's own cold start (launch to worker 0's first step).
"""
import argparse
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
from tests.elastic.elastic_util import SCRIPTS, Launch, elastic_run  # noqa: E402


def _after(launch, pattern, since):
    """Seconds from `since` to the first line matching `pattern` that came after it."""
    regex = re.compile(pattern)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for when, text in list(launch.lines):
            if when >= since and regex.search(text):
                return when - since
        time.sleep(0.01)
    raise RuntimeError(f"no {pattern!r} after the kill:\n{launch.text()}")


def one_round(ranks):
    launch = elastic_run("-np", str(ranks), "--min-np", "2", "--max-np", str(ranks),
                         "--elastic-timeout", "30", script_args=(40, 3, 0.05))
    try:
        launch.wait_for(r"step 1 size", 120)
        cold = next(when for when, text in launch.lines if "step 1 size" in text) - \
            launch.started
        victim = launch.wait_for(r"step 7 size \d+ rank 1 pid (\d+)", 120)[0]
        steps = [when for when, text in launch.lines if " rank 0 " in text and "step " in text]
        interval = statistics.median(b - a for a, b in zip(steps, steps[1:]))
        killed = time.monotonic()
        os.kill(int(victim.group(1)), signal.SIGKILL)
        reformed = _after(launch, r"reset at step \d+ size", killed)
        synced = _after(launch, r"synced at step [1-9]", killed)
        resumed = _after(launch, rf"^\[\d+\] step \d+ size {ranks - 1} ", killed)
        status = launch.finish(120)
        if status != 0:
            raise RuntimeError(f"the job failed with status {status}:\n{launch.text()}")
        return cold, interval, reformed, synced, resumed
    finally:
        launch.close()


def ps_round():
    with tempfile.TemporaryDirectory() as scratch:
        last = os.path.join(scratch, "last")
        launch = Launch([sys.executable, "-m", "tensorweave.cli.main", "launch", "--ps", "1",
                         "--workers", "1", "--max-workers", "2", "--", sys.executable,
                         os.path.join(SCRIPTS, "ps_task.py"), last])
        try:
            launch.wait_for(r"\[worker:0\] worker 0 global step 5 ", 120)
            cold = next(when for when, text in launch.lines if "[worker:0] worker 0" in text) \
                - launch.started
            subprocess.run([sys.executable, "-m", "tensorweave.cli.main", "launch",
                            "--add-worker", str(launch.process.pid)], check=True, timeout=60,
                           capture_output=True)
            asked = time.monotonic()
            joined = _after(launch, r"\[worker:1\] worker 1 global step", asked)
            with open(last + ".tmp", "w") as handle:
                handle.write("0")
            os.replace(last + ".tmp", last)
            launch.finish(60)
            return cold, joined
        finally:
            launch.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=3)
    parser.add_argument("--ps-rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"# {platform.node()} {os.cpu_count()} cores, python {platform.python_version()}, "
          f"{args.ranks} ranks -> {args.ranks - 1}, {args.rounds} rounds")
    rows = [one_round(args.ranks) for _ in range(args.rounds)]
    names = ("cold start (reference)", "step interval", "death -> re-formed",
             "death -> synced", "death -> resumed step")
    for index, name in enumerate(names):
        values = [row[index] * 1000 for row in rows]
        print(f"{name:24s} median {statistics.median(values):8.0f} ms   "
              f"range {min(values):.0f}-{max(values):.0f} ms")
    resumed = statistics.median(row[4] for row in rows)
    cold = statistics.median(row[0] for row in rows)
    print(f"resumed step vs cold start: {resumed / cold:.2f}x the time")
    ps_rows = [ps_round() for _ in range(args.ps_rounds)]
    for index, name in enumerate(("PS launch cold start", "PS add-worker -> its step")):
        values = [row[index] * 1000 for row in ps_rows]
        print(f"{name:24s} median {statistics.median(values):8.0f} ms   "
              f"range {min(values):.0f}-{max(values):.0f} ms")


if __name__ == "__main__":
    main()
