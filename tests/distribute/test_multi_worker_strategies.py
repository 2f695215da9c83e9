"""The between-graph strategies with real processes on 127.0.0.1, the cluster from TF_CONFIG:
MultiWorkerMirroredStrategy's 2 workers with batch b (a graph of their own, or a tf.keras
model's fit) take the steps of one replica with batch 2b (from worker 0's initial values,
though each worker starts elsewhere); a
ParameterServerStrategy job (a real ps task, 2 asynchronous workers) applies every worker's
gradient once on the ps (closed form for a loss whose gradient does not depend on w)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tensorweave.cli.launch import free_ports
from tests.collective.rank_util import _environment, _finish, results
from tests.distribute import strategy_model
from tests.distributed.cluster_util import REPO, ServerProcesses

pytestmark = pytest.mark.timeout(120)
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts",
                      "strategy_worker.py")


def _workers(kind, cluster, steps, batch, *extra, timeout=90):
    processes = []
    tasks = [(job, index) for job in ("chief", "worker")
             for index in range(len(cluster.get(job, [])))]
    try:
        for job, index in tasks:
            config = json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})
            processes.append(subprocess.Popen(
                [sys.executable, SCRIPT, kind, str(steps), str(batch), *extra], cwd=REPO,
                env=_environment({"TF_CONFIG": config}), stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, start_new_session=True))
    finally:
        outputs = _finish(processes, timeout)
    for code, out in outputs:
        assert code == 0, out[-3000:]
    found = results(outputs)
    assert sorted(found) == list(range(len(tasks))), outputs
    return found


def _two_mirrored_workers(kind, steps, batch):
    """The workers' records, each checked against one replica with twice the batch; and
    that reference (w, b)."""
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    found = _workers(kind, cluster, steps, batch)
    w, b = strategy_model.numpy_reference(2 * batch, steps)
    for record in found.values():
        assert record["replicas"] == 2
        np.testing.assert_allclose(record["w"], w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(record["b"], b, rtol=1e-5, atol=1e-6)
    assert not np.allclose(w, strategy_model.W0)
    return found, w, b


def test_multi_worker_mirrored_two_workers_match_one_replica_with_twice_the_batch():
    steps, batch = 4, 8
    found, w, b = _two_mirrored_workers("mwms", steps, batch)
    error = strategy_model.X @ w + b - strategy_model.Y
    losses = [np.mean(error[i * batch:(i + 1) * batch] ** 2) for i in (2 * steps,
                                                                         2 * steps + 1)]
    for record in found.values():
        # all_reduce SUM and MEAN of rank+1, merge_call's reduce_to of 10*(rank+1)
        np.testing.assert_allclose(record["reduced"], [[3, 3], [1.5, 1.5], [30, 30]])
        assert record["between_graph"] is True
        # the MEAN of the workers' losses on their next batch
        np.testing.assert_allclose(record["loss"], np.mean(losses), rtol=1e-4)


def test_keras_fit_under_multi_worker_mirrored_matches_one_replica_with_twice_the_batch():
    _two_mirrored_workers("keras", 4, 8)


def test_estimator_trains_with_multi_worker_mirrored_strategy(tmp_path):
    steps, batch = 4, 8
    ports = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    found = _workers("estimator", cluster, steps, batch, str(tmp_path))
    # each worker reads every other example: together a batch of 2*batch consecutive rows
    w, b = strategy_model.numpy_reference(2 * batch, steps)
    chief = found[0]
    assert chief["replicas"] == 2 and chief["global_step"] == steps
    np.testing.assert_allclose(chief["w"], w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(chief["b"], b, rtol=1e-5, atol=1e-6)


def test_parameter_server_strategy_applies_every_workers_gradient_on_the_ps():
    steps, batch = 3, 8
    with ServerProcesses({"ps": 1, "worker": 2}, skip={("worker", 0), ("worker", 1)}) as ps:
        found = _workers("ps", ps.cluster, steps, batch)
    # Worker i reads batches i, i+2, ...: together the first 2*steps batches, each applied
    # once with the gradient of mean(x.w), i.e. the batch's column means.
    batches = strategy_model.X[:2 * steps * batch].reshape(2 * steps, batch, 3)
    expected = -strategy_model.LEARNING_RATE * batches.mean(axis=1).sum(axis=0)[:, None]
    for record in found.values():
        assert record["global_step"] == 2 * steps and record["replicas"] == 1
        assert "/job:ps" in record["device"]
        np.testing.assert_allclose(record["w"], expected, rtol=1e-5, atol=1e-6)
