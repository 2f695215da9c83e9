"""Elastic workers of a parameter-server job, as real processes on 127.0.0.1 under
`tensorweave launch --max-workers`: a worker added mid-job trains within seconds from the
job's current global step; a killed worker does not stop the others (asynchronous SGD), nor,
with a backup worker, synchronous SGD (SyncReplicasOptimizer aggregating 2 of 3)."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.elastic.elastic_util import SCRIPTS, Launch, environment

STEP = r"\[worker:{}\] worker {} global step (\d+) pid (\d+)"


def _launch(tmp_path, workers, max_workers, *script_args):
    argv = [sys.executable, "-m", "tensorweave.cli.main", "launch", "--ps", "1",
            "--workers", str(workers), "--max-workers", str(max_workers), "--",
            sys.executable, os.path.join(SCRIPTS, "ps_task.py"), str(tmp_path / "last"),
            *script_args]
    return Launch(argv)


def _global_steps(launch, worker, since=0.0):
    regex = re.compile(STEP.format(worker, worker))
    return [int(m.group(1)) for when, text in list(launch.lines) if when >= since
            for m in [regex.search(text)] if m]


def _wait_steps(launch, worker, above, since, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        steps = _global_steps(launch, worker, since)
        if steps and max(steps) > above:
            return max(steps)
        if launch.process.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"worker {worker} did not pass global step {above} within {timeout} "
                         f"s:\n{launch.text()}")


def _kill_worker(launch, worker, after_step):
    """SIGKILLs `worker` once worker 0 passed `after_step`; (kill time, worker 0's step) once
    the launcher reported the death."""
    victim = launch.wait_for(STEP.format(worker, worker), 120)[0]
    _wait_steps(launch, 0, after_step, 0.0, 60)
    os.kill(int(victim.group(2)), signal.SIGKILL)
    killed = time.monotonic()
    launch.wait_for(rf"worker:{worker} failed with status -9: the others go on", 30)
    return killed, max(_global_steps(launch, 0))


def _stop_at(tmp_path, step):
    (tmp_path / "last.tmp").write_text(str(step))
    os.replace(tmp_path / "last.tmp", tmp_path / "last")


@pytest.mark.timeout(180)
def test_async_worker_killed_and_worker_added(tmp_path):
    launch = _launch(tmp_path, 2, 3)
    try:
        killed, seen = _kill_worker(launch, 1, 5)
        _wait_steps(launch, 0, seen + 20, killed, 60)  # worker 0 alone goes on
        added = subprocess.run([sys.executable, "-m", "tensorweave.cli.main", "launch",
                                "--add-worker", str(launch.process.pid)], env=environment(),
                               capture_output=True, text=True, timeout=60)
        asked = time.monotonic()
        assert added.returncode == 0, added.stderr
        first = launch.wait_for(STEP.format(2, 2), 90)[0]
        joined_after = next(when for when, text in launch.lines
                            if re.search(STEP.format(2, 2), text)) - asked
        # It joined the running job: its first step continues the global step.
        assert int(first.group(1)) > seen
        assert joined_after < 30, joined_after  # measured 4-6 s on 2 loaded cores
        now = _wait_steps(launch, 2, int(first.group(1)) + 5, asked, 60)
        _stop_at(tmp_path, now + 5)
        assert launch.finish(60) == 0, launch.text()
        assert "no standby" not in launch.text()
    finally:
        launch.close()


@pytest.mark.timeout(180)
def test_sync_replicas_go_on_with_a_backup_worker_after_one_is_killed(tmp_path):
    launch = _launch(tmp_path, 3, 3, "--aggregate", "2", "--total", "3")
    try:
        killed, seen = _kill_worker(launch, 2, 3)
        for worker in (0, 1):
            _wait_steps(launch, worker, seen + 10, killed, 60)
        _stop_at(tmp_path, max(_global_steps(launch, 0)) + 3)
        assert launch.finish(60) == 0, launch.text()
    finally:
        launch.close()


def test_add_worker_refuses_a_process_that_is_not_an_elastic_launch():
    from tensorweave.cli import launch as launch_lib
    with pytest.raises(ValueError, match="is not a `tensorweave launch --max-workers`"):
        launch_lib.add_worker(os.getpid())
    with pytest.raises(ValueError, match="--max-workers 1 is below --workers 2"):
        launch_lib.build_plan(1, 2, ["python", "x.py"], max_workers=1)
    plan = launch_lib.build_plan(1, 1, ["python", "x.py"], ports=[1, 2, 3], max_workers=2)
    assert [(t.job, t.index, t.standby) for t in plan] == \
        [("ps", 0, False), ("worker", 0, False), ("worker", 1, True)]
    assert plan[2].tf_config["cluster"]["worker"] == ["127.0.0.1:2", "127.0.0.1:3"]
