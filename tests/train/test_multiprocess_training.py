"""Between-graph training with real processes on 127.0.0.1 (a `tensorweave server` ps, workers
running scripts/replica_trainer.py): sync replicas with a backup worker outrun a straggler and
count its dropped gradients, async workers share the steps, a killed worker is covered (by a
backup in sync mode), a restarted worker rejoins, a killed parameter server restarts empty and
the chief restores the latest checkpoint, and the chief's end stops the ps."""
import re

import pytest

from tests.train.process_cluster import TrainingCluster

pytestmark = pytest.mark.timeout(180)


def test_sync_two_of_three_outruns_a_straggler_and_counts_its_dropped_gradients():
    steps, delay = 200, 0.2
    with TrainingCluster(3) as cluster:
        for index in range(3):
            cluster.start_worker(index, "--sync", "--aggregate", 2, "--last_step", steps,
                                 "--delay", delay if index == 2 else 0)
        results = [cluster.result(index) for index in range(3)]
    chief = results[0]
    assert all(r["global_step"] == steps for r in results)
    assert chief["dropped"] >= 1 and all(r["dropped"] == chief["dropped"] for r in results)
    # Steps did not wait for the straggler: if they had, it would have given a gradient to
    # each one, as the chief did. (How much faster this is: benchmarks/bench_training.py.)
    assert results[2]["runs"] < 0.75 * chief["runs"], results
    assert chief["last_loss"] < 1e-3 * chief["first_loss"] and chief["error"] < 1e-3


def test_async_workers_share_the_steps(tmp_path):
    steps, last_step_file = 400, str(tmp_path / "last_step")
    with TrainingCluster(2) as cluster:
        for index in range(2):  # 10 ms a step of input, as the kill tests have
            cluster.start_worker(index, "--last_step", 10 ** 6, "--last_step_file",
                                 last_step_file, "--delay", 0.01)
        for index in range(2):  # both train (a slow start of a process is not a share)
            cluster.wait_for_progress(index, 10)
        before = [cluster.runs(index) for index in range(2)]
        last_step = cluster.set_last_step(last_step_file, steps)
        results = [cluster.result(index) for index in range(2)]
    # A worker that sees the last step stops; the other may have one step in flight.
    assert all(last_step <= r["global_step"] <= last_step + 1 for r in results), results
    shares = [r["runs"] - runs for r, runs in zip(results, before)]
    # Both contribute a fair share. Without the 10 ms of input a step, the share measured
    # how the OS schedules three CPU-bound processes on two cores (16 of 404 steps under a
    # load of 11, 64 of 400 under 8): that is a benchmark number (bench_training.py).
    assert min(shares) >= 0.25 * sum(shares), shares
    assert results[0]["error"] < 1e-3


def _kill_and_restart(mode, restart, tmp_path):
    """Kills a worker once it has trained, checks the others go on, restarts it if asked and
    waits until it trains again; only then does the test set the last step, so no start-up
    delay of a process can end the training before the case is seen."""
    last_step_file = str(tmp_path / "last_step")
    args = ["--last_step", 10 ** 6, "--last_step_file", last_step_file, "--delay", 0.01]
    args += ["--sync", "--aggregate", 2] if mode == "sync" else []
    workers = 3 if mode == "sync" else 2
    victim = workers - 1
    with TrainingCluster(workers) as cluster:
        for index in range(workers):
            cluster.start_worker(index, *args)
        cluster.wait_for_progress(victim, 30)
        cluster.kill_worker(victim)
        cluster.wait_for_progress(0, cluster.runs(0) + 30)  # the others go on without it
        if restart:
            cluster.start_worker(victim, *args)
            cluster.wait_for_progress(victim, 10)  # it rejoined and trains
        last_step = cluster.set_last_step(last_step_file, 40)
        results = {index: cluster.result(index) for index in range(workers)
                   if restart or index != victim}
    # A worker stops once it sees the last step; another one may have a step in flight.
    assert all(last_step <= r["global_step"] <= last_step + 1 for r in results.values()), \
        (last_step, results)
    assert results[0]["error"] < 1e-3


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_killed_worker_is_covered(mode, tmp_path):
    _kill_and_restart(mode, restart=False, tmp_path=tmp_path)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_restarted_worker_rejoins(mode, tmp_path):
    _kill_and_restart(mode, restart=True, tmp_path=tmp_path)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_killed_ps_restarts_empty_and_the_chief_restores_the_latest_checkpoint(mode,
                                                                                 tmp_path):
    last_step_file = str(tmp_path / "last_step")
    args = ["--last_step", 10 ** 6, "--last_step_file", last_step_file, "--delay", 0.01]
    args += ["--sync", "--aggregate", 2] if mode == "sync" else []
    workers = 3 if mode == "sync" else 2
    with TrainingCluster(workers) as cluster:
        cluster.start_worker(0, *args, "--checkpoint_dir", tmp_path, "--save_steps", 20)
        for index in range(1, workers):
            cluster.start_worker(index, *args)
        cluster.wait_for_progress(0, 60)
        cluster.servers.kill("ps", 0)
        runs_before = cluster.runs(0)
        cluster.servers.restart("ps", 0)
        cluster.wait_for_progress(0, runs_before + 30)  # training resumed
        last_step = cluster.set_last_step(last_step_file, 40)
        chief_output = []
        results = {index: cluster.result(index, output=chief_output if index == 0 else None)
                   for index in range(workers)}
    # The worker that sees the last step stops, another may have its step in flight (TF's
    # StopAtStepHook does the same), so last_step + 1 is fine. This was the "301 instead of
    # 300" seen before with two async workers: each run applied exactly one step (runs =
    # final step + steps redone after the restore), the extra one was the other worker's.
    assert all(last_step <= r["global_step"] <= last_step + 1 for r in results.values()), \
        (last_step, results)
    restored = re.findall(r"Restoring parameters from \S*model\.ckpt-(\d+)", chief_output[0])
    assert len(restored) == 1 and int(restored[0]) >= 20, chief_output[0][-3000:]
    # Training went on from the checkpoint's step, not from zero: every step a worker saw
    # after the restart is at least the restored one.
    restored_step = int(restored[0])
    assert all(after >= restored_step for r in results.values() for _, after in r["rewinds"])
    assert results[0]["error"] < 1e-3


def test_the_chiefs_end_stops_the_parameter_servers():
    with TrainingCluster(1) as cluster:
        cluster.start_worker(0, "--last_step", 20, "--stop_ps")
        assert cluster.result(0)["global_step"] == 20
        cluster.servers.processes[("ps", 0)].wait(20)  # join() returned: the ps exited
        assert cluster.servers.processes[("ps", 0)].returncode == 0
