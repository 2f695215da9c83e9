"""Parameter-server training across namespace hosts: every task a real `tf.train.Server`
process, the cluster named by the hosts' addresses.

Layout (two hosts):  host 0 runs ps 0 and worker 1,  host 1 runs ps 1 and worker 0,
so each worker reads one variable from a ps on its own host and one across the link: the
step stats must name shared memory for the first and TCP for the second."""
import json

import numpy as np
import pytest

from tests.multihost.scripts import ps_task

pytestmark = pytest.mark.timeout(60)

LAYOUT = {("ps", 0): 0, ("worker", 1): 0, ("ps", 1): 1, ("worker", 0): 1}
PORT = 2222  # each host is a fresh network namespace: its ports are all free


def cluster_of(hosts):
    ports = {}
    cluster = {"ps": [None, None], "worker": [None, None]}
    for (job, index), host in sorted(LAYOUT.items()):
        port = ports[host] = ports.get(host, PORT - 1) + 1
        cluster[job][index] = f"{hosts.address(host)}:{port}"
    return cluster


def train(processes, mode, steps):
    cluster = json.dumps(cluster_of(processes.hosts))
    workers = {}
    for (job, index), host in sorted(LAYOUT.items()):
        process = processes.start(host, "ps_task.py", "--cluster", cluster, "--job", job,
                                  "--task", index, "--mode", mode, "--steps", steps)
        if job == "worker":
            workers[index] = process
    return processes.results([workers[0], workers[1]], timeout=45)


def check_planes(records):
    """Worker 0 (host 1) reads ps 1 on its host, ps 0 across; worker 1 the other way round."""
    ps = "/job:ps/replica:0/task:{}".format
    assert records[0]["planes"] == {ps(1): "shm", ps(0): "tcp"}, records[0]["planes"]
    assert records[1]["planes"] == {ps(0): "shm", ps(1): "tcp"}, records[1]["planes"]


def test_async_ps_training_across_hosts_converges_and_reports_its_planes(processes):
    steps = 30
    records = train(processes, "async", steps)
    check_planes(records)
    # Every run of either worker applied one update: the worker that read the step last
    # saw them all.
    assert max(r["global_step"] for r in records) == sum(r["runs"] for r in records) >= steps
    # (A worker's own loss may rise: the other may pull w towards its target meanwhile.)
    # Each update moves w a quarter of the way from where it was read to one worker's target
    # (1 or 2 times the pattern), so from w = 0 and 30 updates w ends between the targets,
    # whichever worker did more of them (far fewer applied updates would leave it short).
    for record in records:
        ratio = np.array(record["weights"]) / ps_task.pattern()[::ps_task.ELEMENTS // 4]
        assert np.all(ratio > 0.95) and np.all(ratio < 2.0 + 1e-5), ratio


def test_sync_ps_training_across_hosts_matches_the_closed_form(processes):
    steps = 12
    records = train(processes, "sync", steps)
    check_planes(records)
    global_step = records[0]["global_step"]
    assert global_step == steps, records
    # The chief applies the mean gradient w - 1.5 * pattern once per step, from w = 0.
    pattern = ps_task.pattern()[::ps_task.ELEMENTS // 4].astype(np.float64)
    mean_target = 1.5 * pattern
    expected = mean_target * (1 - (1 - ps_task.LEARNING_RATE) ** global_step)
    for record in records:
        np.testing.assert_allclose(record["weights"], expected, rtol=1e-5)
