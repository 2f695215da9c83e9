"""ModelAverageOptimizer on a real cluster: one ps and two worker server processes on
127.0.0.1, one graph and one thread per worker. Every INTERVAL local steps the workers'
models are averaged on the ps; with gradient descent on linear losses the averaged model has
a closed form, checked after every interval."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.contrib.opt import ModelAverageCustomGetter, ModelAverageOptimizer
from tests.distributed.cluster_util import ServerProcesses

pytestmark = pytest.mark.timeout(120)

W0 = np.array([1.0, -2.0, 0.5])
LR, INTERVAL, INTERVALS = 0.1, 2, 3
GRADS = {0: np.array([1.0, 0.5, -1.0]), 1: np.array([-0.5, 2.0, 3.0])}


def _worker(processes, index, barrier, results):
    graph = tf.Graph()
    device = f"/job:worker/task:{index}"
    with graph.as_default():
        getter = ModelAverageCustomGetter(device)
        setter = tf.train.replica_device_setter(cluster=processes.cluster,
                                                worker_device=device)
        with tf.device(setter), tf.variable_scope("model", custom_getter=getter):
            var = tf.get_variable("w", shape=[3], dtype=tf.float64,
                                  initializer=tf.constant_initializer(W0))
            step = tf.train.get_or_create_global_step()
            optimizer = ModelAverageOptimizer(tf.train.GradientDescentOptimizer(LR),
                                              num_worker=2, is_chief=index == 0,
                                              ma_custom_getter=getter,
                                              interval_steps=INTERVAL)
            train_op = optimizer.minimize(tf.reduce_sum(var * GRADS[index]),
                                          global_step=step)
            hook = optimizer.make_session_run_hook()
            hook.begin()
            global_init = tf.global_variables_initializer()
            local_init = tf.local_variables_initializer()
        center = getter._local_2_global[var]
    with tf.Session(processes.target("worker", index), graph=graph) as sess:
        if index == 0:
            sess.run(global_init)
        barrier.wait(30)  # the global copies exist before anyone reads them
        sess.run(local_init)
        hook.after_create_session(sess, None)
        options = tf.RunOptions(timeout_in_ms=30000)
        for _ in range(INTERVALS):
            local = []
            for _ in range(INTERVAL):
                sess.run(train_op, options=options)
                local.append(sess.run(var))
            results.setdefault(index, []).append((local, sess.run([center, step])))


def test_model_average_two_workers_closed_form():
    results, errors = {}, []
    barrier = threading.Barrier(2)
    with ServerProcesses({"ps": 1, "worker": 2}) as processes:
        def run(index):
            try:
                _worker(processes, index, barrier, results)
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                barrier.abort()

        threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        assert not any(thread.is_alive() for thread in threads), "a worker hung"
    assert not errors, errors
    mean_grad = (GRADS[0] + GRADS[1]) / 2
    for index in (0, 1):
        for interval, (local, (center, step)) in enumerate(results[index], start=1):
            start = W0 - (interval - 1) * INTERVAL * LR * mean_grad
            # before the last step of an interval the worker trains alone ...
            np.testing.assert_allclose(local[0], start - LR * GRADS[index], rtol=1e-12,
                                       atol=1e-12)
            # ... and at its end restarts from the average of both workers' models
            np.testing.assert_allclose(local[-1], start - INTERVAL * LR * mean_grad,
                                       rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(center, local[-1], rtol=1e-12, atol=1e-12)
            assert step == interval


def test_model_average_bad_arguments():
    getter = ModelAverageCustomGetter("/job:worker/task:0")
    sgd = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(TypeError, match="ma_custom_getter"):
        ModelAverageOptimizer(sgd, 2, True, ma_custom_getter=object())
    with pytest.raises(ValueError, match="interval_steps"):
        ModelAverageOptimizer(sgd, 2, True, getter, interval_steps=0)
    with pytest.raises(ValueError, match="num_worker"):
        ModelAverageOptimizer(sgd, -1, True, getter)
    optimizer = ModelAverageOptimizer(sgd, 2, True, getter)
    plain = tf.Variable([1.0])
    with pytest.raises(ValueError, match="global_step is required"):
        optimizer.minimize(tf.reduce_sum(plain))
    with pytest.raises(ValueError, match="not made by the ModelAverageCustomGetter"):
        optimizer.minimize(tf.reduce_sum(plain), global_step=tf.train.get_or_create_global_step())
