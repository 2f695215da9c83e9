"""`tensorweave run --elastic` with real processes on 127.0.0.1: a rank killed with SIGKILL
mid-training, a rank added, too few ranks. The ranks train elastic_train.py (SGD whose
averaged gradient depends on the job's size, and a counter of sizes), committing every
COMMIT steps; the final values are predicted from the committed per-step sizes, and the size
may only change at a commit (the ranks roll back to it)."""
import os
import signal
import sys
import time

import pytest

from tests.elastic import elastic_util
from tests.elastic.elastic_util import elastic_run, predicted

STEPS, COMMIT, STEP_SECONDS = 24, 3, 0.1


def _job(num_proc, max_np, elastic_timeout=30, slow_file=None):
    script_args = (STEPS, COMMIT, STEP_SECONDS) + ((slow_file,) if slow_file else ())
    return elastic_run("-np", str(num_proc), "--min-np", "2", "--max-np", str(max_np),
                       "--elastic-timeout", str(elastic_timeout), script_args=script_args)


def _check_results(launch, final_size):
    results = launch.results()
    assert len(results) == final_size, launch.text()
    first = results[0]
    for result in results:
        assert result["step"] == STEPS and result["size"] == final_size
        assert result["sizes"] == first["sizes"]
        assert result["weight"] == first["weight"] and result["counter"] == first["counter"]
    assert sorted(r["rank"] for r in results) == list(range(final_size))
    weight, counter = predicted(first["sizes"])
    assert first["counter"] == counter
    assert first["weight"] == pytest.approx(weight, rel=1e-5)
    return first["sizes"]


def _size_changes(sizes):
    """[(step after which the size changed, size before, size after)]."""
    return [(i, sizes[i - 1], sizes[i]) for i in range(1, len(sizes)) if sizes[i] != sizes[i - 1]]


def _assert_rolled_back(launch, size):
    """The survivors re-formed with `size` ranks at a commit at or after step 6, the last one
    the victim (killed at its step 7) saw, and the launcher reported the SIGKILL."""
    reset = launch.wait_for(rf"reset at step (\d+) size {size}", 60)[0]
    step = int(reset.group(1))
    assert step % COMMIT == 0 and step >= 6, launch.text()
    assert "failed with status -9" in launch.text()
    return step


@pytest.mark.timeout(150)
def test_the_coordinator_rank_and_another_die_a_tenth_of_a_second_apart():
    """Rank 0 (which hosts the coordinator) dies, then rank 2 while the others may be
    re-forming with it: they must notice at once (not after the 15 s connection timeout),
    re-form with 2 and finish."""
    launch = _job(4, 4)
    try:
        first = launch.wait_for(r"step 7 size 4 rank 0 pid (\d+)", 90)[0].group(1)
        second = launch.wait_for(r"step 7 size 4 rank 2 pid (\d+)", 30)[0].group(1)
        os.kill(int(first), signal.SIGKILL)
        time.sleep(0.1)
        os.kill(int(second), signal.SIGKILL)
        killed = time.monotonic()
        # the survivors re-form (a reset, then steps at a smaller size) well before the 15 s
        # a member that died mid-connection would otherwise cost; the rest of the job's steps
        # take as long as the machine's load makes them
        launch.wait_for(r"reset at step \d+ size [23] ", 60)
        assert time.monotonic() - killed < 14.0, launch.text()
        assert launch.finish(90) == 0, launch.text()
        sizes = _check_results(launch, final_size=2)
        changes = _size_changes(sizes)
        assert [c[1:] for c in changes] in ([(4, 2)], [(4, 3), (3, 2)]), sizes
        assert all(step % COMMIT == 0 and step >= 6 for step, _, _ in changes), sizes
        assert launch.text().count("failed with status -9") == 2
    finally:
        launch.close()


@pytest.mark.timeout(150)
def test_a_killed_rank_is_rolled_back_then_sigusr1_adds_a_rank(tmp_path):
    slow = tmp_path / "slow"
    launch = _job(3, 3, slow_file=slow)
    try:
        victim = launch.wait_for(r"step 7 size 3 rank 1 pid (\d+)", 90)[0].group(1)
        slow.touch()  # keep the job going until the added rank is in
        os.kill(int(victim), signal.SIGKILL)
        shrunk_at = _assert_rolled_back(launch, 2)
        os.kill(launch.process.pid, signal.SIGUSR1)
        synced = launch.wait_for(r"\[4\] synced at step (\d+)", 60)[0]
        slow.unlink()
        assert launch.finish(90) == 0, launch.text()
        sizes = _check_results(launch, final_size=3)
        grown_at = int(synced.group(1))
        assert _size_changes(sizes) == [(shrunk_at, 3, 2), (grown_at, 2, 3)]
        assert grown_at % COMMIT == 0
    finally:
        launch.close()


@pytest.mark.timeout(150)
def test_a_rank_added_by_host_discovery_joins_with_the_committed_state(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1:2\n")
    script = tmp_path / "discover.sh"
    script.write_text(f"#!/bin/sh\ncat {hosts}\n")
    script.chmod(0o755)
    slow = tmp_path / "slow"
    slow.touch()
    launch = elastic_run("--min-np", "2", "--max-np", "3", "--host-discovery-script",
                         str(script), "--discovery-interval", "0.2",
                         "--elastic-timeout", "30",
                         script_args=(STEPS, COMMIT, STEP_SECONDS, slow))
    try:
        launch.wait_for(r"step 2 size 2", 90)
        hosts.write_text("127.0.0.1:3\n")
        launch.wait_for(r"\[3\] synced at step", 60)
        slow.unlink()
        assert launch.finish(100) == 0, launch.text()
        sizes = _check_results(launch, final_size=3)
        # The newcomer (process 3) started from rank 0's committed step, not from 0.
        synced = launch.wait_for(r"\[3\] synced at step (\d+)", 1)[0]
        changed_at = int(synced.group(1))
        assert _size_changes(sizes) == [(changed_at, 2, 3)] and changed_at % COMMIT == 0
    finally:
        launch.close()


@pytest.mark.timeout(120)
def test_below_min_np_waits_for_the_elastic_timeout_then_fails_clearly():
    launch = _job(2, 2, elastic_timeout=3)
    try:
        victim = launch.wait_for(r"step 3 size 2 rank 1 pid (\d+)", 90)[0]
        killed = time.monotonic()
        os.kill(int(victim.group(1)), signal.SIGKILL)
        assert launch.finish(60) == 1, launch.text()
        waited = time.monotonic() - killed
        assert 3.0 <= waited < 30.0, waited
        assert "only 1 rank(s) alive, fewer than --min-np 2, for --elastic-timeout 3 s: " \
               "giving up" in launch.text()
        # The survivor, waiting in the rendezvous, got the reason too.
        assert "Elastic job stopped: only 1 rank(s) alive" in launch.text()
        assert not launch.results()
    finally:
        launch.close()


@pytest.mark.timeout(60)
def test_a_script_that_fails_on_every_rank_stops_the_job_at_once():
    launch = elastic_util.Launch([sys.executable, "-m", "tensorweave.cli.main", "run",
                                  "--elastic", "-np", "2", "--min-np", "2",
                                  "--elastic-timeout", "600", sys.executable, "-c",
                                  "import sys; sys.exit(3)"])
    try:
        assert launch.finish(45) == 1, launch.text()
        assert "every process failed before the ranks ever formed" in launch.text()
    finally:
        launch.close()
