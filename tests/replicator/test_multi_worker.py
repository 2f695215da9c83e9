"""MultiWorkerReplicator with 2 real worker processes on 127.0.0.1 in each mode: allreduce
(ranks from `tensorweave run`'s environment) and ps_sync reach the parameters of one replica
with twice the batch; ps_async trains into the same loss band; mismatched collectives fail at
build time in every rank; the primitives between processes against NumPy."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import replicator
from tests.collective.rank_util import _environment, _finish, results, run_native
from tests.distributed.cluster_util import ServerProcesses
from tests.replicator import model_util

pytestmark = pytest.mark.timeout(90)
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
STEPS = 6


def _reference(steps, optimizer):
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(1)
    with tf.Session(config=repl.session_config()) as sess:
        return model_util.train(repl, sess, steps, optimizer)


def _run_ps_workers(mode, steps, optimizer):
    with ServerProcesses({"ps": 1, "worker": 2}, skip={("worker", 0), ("worker", 1)}) as ps:
        processes = []
        try:
            for index in range(2):
                config = json.dumps({"cluster": ps.cluster,
                                     "task": {"type": "worker", "index": index}})
                processes.append(subprocess.Popen(
                    [sys.executable, os.path.join(SCRIPTS, "worker_train.py"), mode,
                     str(steps), optimizer], env=_environment({"TF_CONFIG": config}),
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                    start_new_session=True))
        finally:
            outputs = _finish(processes, 60)
    return outputs


def _worker_results(outputs):
    for code, out in outputs:
        assert code == 0, out
    found = results(outputs)
    assert sorted(found) == [0, 1] and all(r["replicas"] == 2 for r in found.values())
    return found


@pytest.mark.parametrize("mode", ["allreduce", "ps_sync"])
def test_two_workers_take_the_steps_of_one_replica_with_twice_the_batch(mode):
    if mode == "allreduce":
        outputs = run_native(2, "../../replicator/scripts/worker_train.py", mode, str(STEPS),
                             "momentum", timeout=60)
    else:
        outputs = _run_ps_workers(mode, STEPS, "momentum")
    found = _worker_results(outputs)
    w1, w2 = _reference(STEPS, "momentum")
    for record in found.values():
        np.testing.assert_allclose(record["w1"], w1, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(record["w2"], w2, rtol=1e-5, atol=1e-6)
    assert not np.allclose(w1, model_util.INITIAL["w1"])


def test_ps_async_trains_into_the_same_loss_band():
    found = _worker_results(_run_ps_workers("ps_async", 2 * STEPS, "sgd"))
    reference = model_util.full_loss(*_reference(2 * STEPS, "sgd"))
    start = model_util.full_loss(model_util.INITIAL["w1"], model_util.INITIAL["w2"])
    for record in found.values():
        loss = model_util.full_loss(np.array(record["w1"], np.float32),
                                    np.array(record["w2"], np.float32))
        assert loss < 0.6 * start and loss < 2.0 * reference, (start, reference, loss)


def test_the_cluster_comes_from_a_cluster_spec_or_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:1"],
                                    "worker": ["127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"]})
    repl = replicator.MultiWorkerReplicator("ps_async", cluster=cluster, task_index=2)
    assert (repl.num_replicas, repl.worker_index, repl.is_chief) == (3, 2, False)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster.as_dict(),
                                                "task": {"type": "worker", "index": 0}}))
    repl = replicator.MultiWorkerReplicator("ps_sync")
    assert (repl.num_replicas, repl.worker_index, repl.is_chief) == (3, 0, True)
    tf.reset_default_graph()
    with repl.context():
        weights = tf.get_variable("w", [2])
    assert weights.device.startswith("/job:ps/task:0")
    with pytest.raises(ValueError, match="no collectives between workers"):
        repl.run(lambda: replicator.all_sum(tf.ones([1])))


def test_bad_modes_and_clusters():
    with pytest.raises(ValueError, match="mode must be one of"):
        replicator.MultiWorkerReplicator("mirrored")
    with pytest.raises(ValueError, match="needs a cluster with 'ps' and 'worker' jobs"):
        replicator.MultiWorkerReplicator("ps_sync", cluster={"worker": ["127.0.0.1:2"]})


def test_primitives_between_two_processes_match_numpy_and_mismatches_fail_at_build():
    outputs = run_native(2, "../../replicator/scripts/primitives_checks.py", timeout=60)
    for code, out in outputs:
        assert code == 0, out
    found = results(outputs)
    values = np.arange(12, dtype=np.float32).reshape(2, 3, 2) - 4
    weights = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 6, 2)
    for rank in (0, 1):
        record = found[rank]
        assert record["id"] == rank
        np.testing.assert_allclose(record["sum"], values.sum(0))
        np.testing.assert_allclose(record["max"], values.max(0))
        np.testing.assert_allclose(record["gather"], values.reshape(6, 2))
        np.testing.assert_allclose(record["bcast"], values[1])
        np.testing.assert_allclose(record["reduced"], values.sum(0))
        # d(sum over ranks of each rank's loss)/dx on this rank.
        expected = weights[0][3 * rank:3 * rank + 3] + weights[1][3 * rank:3 * rank + 3] + \
            2 * 2 * values.mean(0) / 2
        np.testing.assert_allclose(record["grad"], expected, rtol=1e-5)
        assert "cross-replica calls differ between replicas" in record["mismatch"]
        assert re.search(r"replica 0 call #0 all_reduce\(float32\[3\], 'sum'\) at "
                         r".*primitives_checks.py:\d+, but replica 1 call #0 all_gather",
                         record["mismatch"]), record["mismatch"]
