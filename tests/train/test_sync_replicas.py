"""SyncReplicasOptimizer in one process: a cluster of in-process servers (one ps task, one task
per worker) and worker threads, each with its own graph (between-graph replication) placed by
replica_device_setter and its own session on its own task, so they share the ps's variables,
queues and accumulators and each keeps its local step. Closed-form checks: the step
averages one gradient per worker (per row for sparse gradients), 3-of-3 waits for a slow worker while 2-of-3 does not (and
counts the slow worker's dropped gradients), a worker whose input ends leaves without holding
the others, and the chief's end ends the workers waiting for it."""
import logging
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.cli.launch import free_ports
from tensorweave.train import sync_replicas_optimizer

pytestmark = pytest.mark.timeout(90)


class InProcessCluster:
    """One ps and `workers` worker tasks, each a Server in this process."""

    def __init__(self, workers):
        ports = free_ports(workers + 1)
        self.spec = {"ps": [f"127.0.0.1:{ports[0]}"],
                     "worker": [f"127.0.0.1:{port}" for port in ports[1:]]}
        self.servers = [tf.train.Server(self.spec, "ps", 0)]
        self.servers += [tf.train.Server(self.spec, "worker", i) for i in range(workers)]

    def target(self, index):
        return self.servers[index + 1].target

    def device_setter(self, index):
        return tf.train.replica_device_setter(cluster=self.spec,
                                              worker_device=f"/job:worker/task:{index}")

    def stop(self):
        for server in self.servers:
            server.stop()


@pytest.fixture
def cluster():
    clusters = []

    def make(workers):
        clusters.append(InProcessCluster(workers))
        return clusters[-1]

    yield make
    for made in clusters:
        made.stop()


def _run_workers(target, count):
    """Runs target(index) on `count` threads; returns their results, re-raising failures."""
    results, errors = {}, []

    def run(index):
        try:
            results[index] = target(index)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "a worker hung"
    if errors:
        raise errors[0]
    return results


def _regression_worker(cluster, index, aggregate, total, last_step, delay=0.0, batches=None):
    """One worker training y = x . [1, 2, 3]; returns (its steps, global step, dropped, w)."""
    rng = np.random.default_rng(index)
    features = rng.normal(size=(64, 3)).astype(np.float32)
    targets = features @ np.array([1.0, 2.0, 3.0], np.float32)
    with tf.Graph().as_default(), tf.device(cluster.device_setter(index)):
        if batches is None:
            x, y = tf.constant(features), tf.constant(targets)
        else:  # a finite input: OutOfRangeError after `batches` steps
            dataset = tf.data.Dataset.from_tensors((features, targets)).repeat(batches)
            x, y = tf.data.make_one_shot_iterator(dataset).get_next()
        w = tf.Variable(tf.zeros([3]), name="w")
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, 1) - y))
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                             replicas_to_aggregate=aggregate,
                                             total_num_replicas=total)
        train = opt.minimize(loss, global_step=step)
        hooks = [opt.make_session_run_hook(index == 0)]
        if last_step is not None:
            hooks.append(tf.train.StopAtStepHook(last_step=last_step))
        runs = 0
        with tf.train.MonitoredTrainingSession(master=cluster.target(index),
                                               is_chief=index == 0, hooks=hooks,
                                               log_step_count_steps=0) as sess:
            while not sess.should_stop():
                if delay:
                    time.sleep(delay)  # a slow worker: its gradient is late
                sess.run(train)
                runs += 1
        with tf.Session(cluster.target(index)) as sess:
            return (runs,) + tuple(sess.run([step, opt.dropped_gradients, w.value()]))


def test_each_step_averages_one_gradient_per_worker(cluster):
    """Worker i's loss is c_i * sum(w), so its gradient is c_i everywhere: after k steps of
    2-of-2 sync SGD, w = -lr * k * mean(c) exactly."""
    cluster = cluster(2)

    def worker(index):
        with tf.Graph().as_default(), tf.device(cluster.device_setter(index)):
            w = tf.Variable(tf.zeros([2]), name="w")
            step = tf.train.get_or_create_global_step()
            loss = (1.0 + 2.0 * index) * tf.reduce_sum(w)
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 2, 2)
            train = opt.minimize(loss, global_step=step)
            hooks = [opt.make_session_run_hook(index == 0),
                     tf.train.StopAtStepHook(last_step=5)]
            with tf.train.MonitoredTrainingSession(master=cluster.target(index),
                                                   is_chief=index == 0, hooks=hooks,
                                                   log_step_count_steps=0) as sess:
                runs = 0
                while not sess.should_stop():
                    sess.run(train)
                    runs += 1
            with tf.Session(cluster.target(index)) as sess:
                return runs, sess.run(w.value())

    results = _run_workers(worker, 2)
    for runs, w in results.values():
        assert runs == 5  # one gradient per step each: the barrier holds
        np.testing.assert_allclose(w, [-0.5 * 5 * 2.0] * 2)


def test_sparse_gradients_stay_sparse_and_each_row_averages_the_workers_that_had_it(cluster):
    """Worker i looks up rows ids[i] of a table and its loss is c_i times their sum: its
    gradient is IndexedSlices of value c_i on those rows. A row's step is the mean over the
    workers whose gradient had it (row 0: c_0 = 1, row 1: (1 + 3) / 2, row 2: c_1 = 3, row 3:
    nobody), not the dense mean over both workers (0.5, 2, 1.5, 0)."""
    cluster = cluster(2)
    ids = [[0, 1], [1, 2]]

    def worker(index):
        with tf.Graph().as_default(), tf.device(cluster.device_setter(index)):
            table = tf.Variable(tf.zeros([4, 2]), name="table")
            step = tf.train.get_or_create_global_step()
            loss = (1.0 + 2.0 * index) * tf.reduce_sum(tf.nn.embedding_lookup(table,
                                                                              ids[index]))
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 2, 2)
            train = opt.minimize(loss, global_step=step)
            types = {op.type for op in tf.get_default_graph().get_operations()}
            hooks = [opt.make_session_run_hook(index == 0),
                     tf.train.StopAtStepHook(last_step=5)]
            with tf.train.MonitoredTrainingSession(master=cluster.target(index),
                                                   is_chief=index == 0, hooks=hooks,
                                                   log_step_count_steps=0) as sess:
                while not sess.should_stop():
                    sess.run(train)
            with tf.Session(cluster.target(index)) as sess:
                return types, sess.run(table.value())

    results = _run_workers(worker, 2)
    for types, table in results.values():
        assert "SparseConditionalAccumulator" in types and "ScatterAdd" in types
        np.testing.assert_allclose(table, -0.5 * 5 * np.array([[1.0] * 2, [2.0] * 2,
                                                                [3.0] * 2, [0.0] * 2]))


@pytest.fixture
def info_logs():
    """The tensorweave logger's INFO messages during the test."""
    logger, records = tf.logging.get_logger(), []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_backup_worker_keeps_a_straggler_from_holding_the_step(cluster, info_logs):
    steps, delay = 150, 0.1
    cluster = cluster(3)
    results = _run_workers(lambda i: _regression_worker(
        cluster, i, 2, 3, steps, delay=delay if i == 2 else 0.0), 3)
    runs = [results[i][0] for i in range(3)]
    global_step, dropped, w = results[0][1:]
    assert global_step == steps
    # Steps did not wait for the straggler (then it would have given a gradient to each one,
    # as the chief did); the time it saves is a benchmark number (bench_training.py).
    assert runs[2] < 0.75 * runs[0], runs
    # Late gradients are counted (mostly the straggler's; a fast worker's too when the
    # straggler's happened to arrive first); every gradient was used or counted.
    assert dropped >= 1 and 2 * steps + dropped <= sum(runs)
    assert all(results[i][2] == dropped for i in range(3))  # one variable, seen by everyone
    # and the chief's log line every log_every_n_steps (100) steps
    logged = [m for m in info_logs if m.startswith("SyncReplicas: global step 100, ")]
    assert len(logged) == 1 and "stale gradients dropped" in logged[0], info_logs
    np.testing.assert_allclose(w, [1.0, 2.0, 3.0], atol=1e-3)  # the loss fell to ~0


def test_without_backups_every_step_waits_for_the_slowest_worker(cluster):
    steps, delay = 8, 0.1
    start = time.monotonic()
    cluster = cluster(3)
    results = _run_workers(lambda i: _regression_worker(
        cluster, i, 3, 3, steps, delay=delay if i == 2 else 0.0), 3)
    assert time.monotonic() - start >= steps * delay
    assert [results[i][0] for i in range(3)] == [steps] * 3 and results[0][2] == 0


def test_a_worker_whose_input_ends_leaves_without_holding_the_others(cluster):
    cluster = cluster(3)
    results = _run_workers(lambda i: _regression_worker(
        cluster, i, 3, 3, 30, batches=5 if i == 2 else None), 3)
    assert results[2][0] == 5  # it left normally (OutOfRangeError) after its input
    assert results[0][1] == 30 and results[1][0] >= 25  # the others finished without it


def test_the_chiefs_end_ends_the_workers_waiting_for_a_token(cluster):
    cluster = cluster(2)

    def worker(index):
        # Only the chief stops at a step; the others loop until their session ends.
        return _regression_worker(cluster, index, 2, 2, 10 if index == 0 else None)

    results = _run_workers(worker, 2)
    assert results[0][1] == 10 and results[1][0] in (10, 11)


def test_misuse_is_reported():
    w = tf.Variable(1.0)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 3)
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="Global step is required"):
        opt.minimize(w * 2.0)
    with pytest.raises(ValueError, match="apply_gradient should be called"):
        tf.train.MonitoredSession(hooks=[opt.make_session_run_hook(True)])
    few = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 4, 2)
    few.minimize(w * 2.0, global_step=tf.train.get_or_create_global_step())
    with pytest.raises(ValueError, match="Too few tokens"):
        few.get_init_tokens_op(num_tokens=1)
    assert few.compute_gradients(w * 2.0)[0][1] is w


def test_a_failing_chief_loop_is_reported_instead_of_hanging_the_workers(cluster, monkeypatch):
    def broken(self, sess, coord):
        raise tf.errors.InternalError(None, None, "the chief's loop broke (simulated)")

    monkeypatch.setattr(sync_replicas_optimizer._ChiefSyncRunner, "_loop", broken)
    cluster = cluster(2)
    outcomes = {}

    def worker(index):
        try:
            outcomes[index] = _regression_worker(cluster, index, 2, 2, 50)[0]
        except tf.errors.InternalError as exc:
            outcomes[index] = exc

    _run_workers(worker, 2)
    assert isinstance(outcomes[0], tf.errors.InternalError)  # the chief says why
    assert outcomes[1] <= 1  # the other worker ended instead of waiting for ever
