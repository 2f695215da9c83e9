"""tf.cond and tf.while_loop in a real cluster (one `tensorweave server` process per task on
127.0.0.1): the function bodies travel inside the GraphDefs the master ships to the workers,
a loop and its gradient run on a worker against a variable on the parameter server, a branch
assigning a ps variable runs where the variable lives, and a deadline stops an endless loop on
a worker."""
import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.cluster_util import ServerProcesses

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def servers():
    with ServerProcesses({"ps": 1, "worker": 1}) as processes:
        yield processes


def _train(target):
    """Three GradientDescent steps of a loop over a ps weight; the losses and the weight."""
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable([[0.5, -0.3], [0.2, 0.4]], name="w")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [2, 1], name="x")
            _, h = tf.while_loop(lambda i, h: i < 4,
                                 lambda i, h: (i + 1, tf.tanh(tf.matmul(w, h))), [0, x])
            loss = tf.cond(tf.reduce_sum(h) > 0.0, lambda: tf.reduce_sum(tf.square(h)),
                           lambda: tf.reduce_sum(h * 0.5))
            train = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
        config = tf.ConfigProto(allow_soft_placement=True)  # the local run has one device
        with tf.Session(target, config=config) as session:
            session.run(w.initializer)
            losses = [session.run([loss, train], {x: [[1.0], [2.0]]})[0] for _ in range(3)]
            return losses, session.run(w)


def test_a_loop_and_a_cond_train_a_ps_variable_as_they_do_locally(servers):
    local_losses, local_w = _train("")
    losses, w = _train(servers.target("worker", 0))
    np.testing.assert_allclose(losses, local_losses, rtol=1e-5)
    np.testing.assert_allclose(w, local_w, rtol=1e-5, atol=1e-7)
    assert losses[-1] < losses[0]


def test_a_branch_assigning_a_ps_variable_runs_on_the_ps(servers):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            count = tf.Variable(0, name="count")
        with tf.device("/job:worker/task:0"):
            flag = tf.placeholder(tf.bool, [])
            out = tf.cond(flag, lambda: tf.assign_add(count, 1),
                          lambda: tf.identity(count.read_value()))
        assert out.op.device.startswith("/job:ps/task:0")
        with tf.Session(servers.target("worker", 0)) as session:
            session.run(count.initializer)
            got = [session.run(out, {flag: value}) for value in (True, True, False)]
            assert got == [1, 2, 2]


def test_a_deadline_stops_an_endless_loop_on_a_worker(servers):
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            out = tf.while_loop(lambda i: tf.constant(True), lambda i: i + 1, [0])
        with tf.Session(servers.target("worker", 0)) as session:
            with pytest.raises(tf.errors.DeadlineExceededError):
                session.run(out, options=tf.RunOptions(timeout_in_ms=500))
            assert session.run(tf.constant(7)) == 7
