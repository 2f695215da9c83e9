"""Finding 6 of the server probe: sync training (SyncReplicasOptimizer, 3 workers, 2 gradients
a step) whose parameter server is paused (SIGSTOP) for longer than the peer timeout, so that
every worker's session recovers, then resumed (SIGCONT). Before the fix most such runs made
no progress at all afterwards: the chief's loop had polled the paused ps for submissions every
500 ms, each poll abandoned by its caller but queued on the ps, and on resuming the ps ran
them all; they took the workers' fresh submissions for nobody, so no step was ever taken
and every worker waited for a token. Real processes on 127.0.0.1; the pause is short because
the peer timeout is lowered to 2 s."""
import signal
import time

import pytest

from tests.train.process_cluster import TrainingCluster

pytestmark = pytest.mark.timeout(90)

PEER_TIMEOUT_MS = 2000
PAUSE_SECONDS = 5.0  # longer than the peer timeout: every session recovers
RESUME_SECONDS = 20.0  # the bound on the first progress after the ps resumes


def _runs_after(cluster, index, base, timeout):
    """Seconds until worker `index` reports more runs than `base` (AssertionError if not
    within `timeout`)."""
    start = time.monotonic()
    cluster.wait_for_progress(index, base + 10, timeout=timeout)
    return time.monotonic() - start


def test_sync_training_makes_progress_again_after_its_ps_was_paused(tmp_path):
    last_step_file = str(tmp_path / "last_step")
    with TrainingCluster(3) as cluster:
        for index in range(3):
            cluster.start_worker(index, "--sync", "--aggregate", 2, "--last_step", 100000,
                                 "--last_step_file", last_step_file,
                                 "--peer_timeout_ms", PEER_TIMEOUT_MS)
        for index in range(3):
            cluster.wait_for_progress(index, 10, timeout=60)
        cluster.servers.kill("ps", 0, signal.SIGSTOP)
        time.sleep(PAUSE_SECONDS)
        before = {index: cluster.runs(index) for index in range(3)}
        cluster.servers.kill("ps", 0, signal.SIGCONT)
        for index in range(3):
            _runs_after(cluster, index, before[index], RESUME_SECONDS)
        # The job ends normally from here: every worker's session recovered, and each
        # finishes with the weights learnt (the regression's error stays small).
        last_step = cluster.set_last_step(last_step_file, 20)
        outputs = []
        results = [cluster.result(index, timeout=60, output=outputs) for index in range(3)]
        assert all(result["global_step"] >= last_step for result in results), results
        assert any("a new session will be created" in text for text in outputs)
        assert results[0]["error"] < 0.5, results[0]
