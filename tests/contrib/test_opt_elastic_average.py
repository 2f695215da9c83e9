"""ElasticAverageOptimizer on a real cluster: one ps and two worker server processes on
127.0.0.1, one graph per worker (between-graph replication). The workers take their steps in
a fixed order, so the centre, each worker's variable and the global step are compared with a
NumPy re-implementation of elastic averaging step by step."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.contrib.opt import ElasticAverageCustomGetter, ElasticAverageOptimizer
from tests.distributed.cluster_util import ServerProcesses

pytestmark = pytest.mark.timeout(120)

W0 = np.array([1.0, -2.0, 0.5])
LR, PERIOD, MOVING_RATE, RHO = 0.1, 2, 0.25, 0.5
GRADS = {0: np.array([1.0, 0.5, -1.0]), 1: np.array([-0.5, 2.0, 1.0])}
ORDER = [0, 0, 1, 1, 1, 0, 0, 1]  # which worker takes each step


class Worker:
    """One worker's graph and session."""

    def __init__(self, processes, index):
        self.graph = tf.Graph()
        device = f"/job:worker/task:{index}"
        with self.graph.as_default():
            getter = ElasticAverageCustomGetter(device)
            setter = tf.train.replica_device_setter(cluster=processes.cluster,
                                                    worker_device=device)
            with tf.device(setter), tf.variable_scope("model", custom_getter=getter):
                self.var = tf.get_variable("w", shape=[3], dtype=tf.float64,
                                           initializer=tf.constant_initializer(W0))
                self.step = tf.train.get_or_create_global_step()
                loss = tf.reduce_sum(self.var * GRADS[index])
                optimizer = ElasticAverageOptimizer(
                    tf.train.GradientDescentOptimizer(LR), num_worker=2,
                    ea_custom_getter=getter, communication_period=PERIOD,
                    moving_rate=MOVING_RATE, rho=RHO)
                self.train_op = optimizer.minimize(loss, global_step=self.step)
                self.center = getter._global_map[self.var]
                self.hook = optimizer.make_session_run_hook(index == 0, index)
                self.hook.begin()  # builds get_init_op(index)
                self.global_init = tf.global_variables_initializer()
                self.local_init = tf.local_variables_initializer()
                self.saver = optimizer.swapping_saver()
        self.session = tf.Session(processes.target("worker", index), graph=self.graph)


def _reference():
    """(centre, worker variables, global step) after ORDER, by the elastic averaging rule."""
    center, var, cached, local_step, talks = W0.copy(), {}, {}, {0: 0, 1: 0}, 0
    for index in (0, 1):
        var[index], cached[index] = center.copy(), center.copy()
    trace = []
    for index in ORDER:
        grad = GRADS[index] + RHO * (var[index] - cached[index])
        var[index] = var[index] - LR * grad
        local_step[index] += 1
        if local_step[index] % PERIOD == 0:
            cached[index] = center.copy()
            moved = MOVING_RATE * (var[index] - cached[index])
            var[index] = var[index] - moved
            center = center + moved
            talks += 1
        trace.append((center.copy(), var[index].copy(), talks))
    return trace


def test_elastic_average_two_workers_match_numpy(tmp_path):
    with ServerProcesses({"ps": 1, "worker": 2}) as processes:
        workers = [Worker(processes, index) for index in (0, 1)]
        try:
            workers[0].session.run(workers[0].global_init)  # the chief
            for worker in workers:
                worker.session.run(worker.local_init)
            # The hooks' init ops meet at a barrier: each must run while the other does.
            errors = []

            def init(worker):
                try:
                    worker.hook.after_create_session(worker.session, None)
                except Exception as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)

            threads = [threading.Thread(target=init, args=(w,), daemon=True) for w in workers]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(40)
            assert not errors and not any(t.is_alive() for t in threads), errors
            for (center, var, talks), index in zip(_reference(), ORDER):
                worker = workers[index]
                worker.session.run(worker.train_op)
                got_center, got_var, got_step = worker.session.run(
                    [worker.center, worker.var, worker.step])
                np.testing.assert_allclose(got_var, var, rtol=1e-12)
                np.testing.assert_allclose(got_center, center, rtol=1e-12)
                assert got_step == talks
            path = workers[0].saver.save(workers[0].session, str(tmp_path / "model"))
        finally:
            for worker in workers:
                worker.session.close()
    final_center = _reference()[-1][0]
    with tf.Graph().as_default():  # an evaluation program restores the centre as model/w
        var = tf.Variable(np.zeros(3), name="model/w")
        with tf.Session() as sess:
            tf.train.Saver([var]).restore(sess, path)
            np.testing.assert_allclose(sess.run(var), final_center, rtol=1e-12)


def test_elastic_average_bad_arguments():
    getter = ElasticAverageCustomGetter("/job:worker/task:0")
    sgd = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(TypeError, match="ea_custom_getter"):
        ElasticAverageOptimizer(sgd, 2, ea_custom_getter=None)
    with pytest.raises(ValueError, match="num_worker"):
        ElasticAverageOptimizer(sgd, 0, getter)
    with pytest.raises(ValueError, match="communication_period"):
        ElasticAverageOptimizer(sgd, 2, getter, communication_period=0)
    with pytest.raises(ValueError, match="pass rho"):
        ElasticAverageOptimizer(tf.train.GradientDescentOptimizer(tf.constant(0.1)), 2, getter)
    optimizer = ElasticAverageOptimizer(sgd, 2, getter)
    plain = tf.Variable([1.0])
    with pytest.raises(ValueError, match="not made by the ElasticAverageCustomGetter"):
        optimizer.compute_gradients(tf.reduce_sum(plain))
