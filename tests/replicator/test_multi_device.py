"""MultiDeviceReplicator on 2 CPU devices of one process: N replicas of batch b take the
same steps as one replica of batch N*b; the cross-replica primitives against NumPy; a
mismatched call is caught when the replicas are joined."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave import replicator
from tensorweave.replicator import primitives
from tests.replicator import model_util

pytestmark = pytest.mark.timeout(60)

RNG = np.random.default_rng(0)
FEATURES = RNG.standard_normal((16, 5)).astype(np.float32)
TARGETS = RNG.standard_normal((16, 3)).astype(np.float32)


def _train(num_replicas, steps=3, optimizer=lambda: tf.train.MomentumOptimizer(0.1, 0.9)):
    """Trains a two-layer net on 8 examples a step, split over the replicas."""
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(num_replicas)
    batch = 8 // num_replicas
    step_holder = tf.placeholder(tf.int32, [], name="step")
    with repl.context():
        w1 = tf.get_variable("w1", initializer=RNG_INIT["w1"])
        w2 = tf.get_variable("w2", initializer=RNG_INIT["w2"])
        opt = repl.wrap_optimizer(optimizer())

    def input_fn(replica_id):
        start = step_holder * 8 + replica_id * batch
        return (tf.slice(tf.constant(FEATURES), [start, 0], [batch, 5]),
                tf.slice(tf.constant(TARGETS), [start, 0], [batch, 3]))

    def step_fn(inputs):
        x, y = inputs
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, w1)), w2) - y))
        return opt.minimize(loss), loss

    results = repl.run(step_fn, input_fn)
    train_ops = [op for op, _ in results]
    loss = repl.reduce([loss for _, loss in results], "mean")
    with tf.Session(config=repl.session_config()) as sess:
        repl.init(sess)
        losses = [sess.run([train_ops, loss], {step_holder: i % 2})[1] for i in range(steps)]
        return sess.run([w1, w2]), losses


RNG_INIT = {"w1": RNG.standard_normal((5, 4)).astype(np.float32),
            "w2": RNG.standard_normal((4, 3)).astype(np.float32)}


@pytest.mark.parametrize("optimizer", [lambda: tf.train.MomentumOptimizer(0.1, 0.9),
                                       lambda: tf.train.AdamOptimizer(0.05)],
                         ids=["momentum", "adam"])
def test_two_replicas_take_the_steps_of_one_with_twice_the_batch(optimizer):
    (w1_two, w2_two), losses_two = _train(2, optimizer=optimizer)
    (w1_one, w2_one), losses_one = _train(1, optimizer=optimizer)
    np.testing.assert_allclose(w1_two, w1_one, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w2_two, w2_one, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses_two, losses_one, rtol=1e-5)
    assert not np.allclose(w1_two, RNG_INIT["w1"])


def test_primitives_match_numpy():
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(3)
    values = RNG.standard_normal((3, 2, 4)).astype(np.float32)

    def step_fn():
        x = tf.gather(tf.constant(values), repl.replica_id)
        return {"sum": replicator.all_sum(x), "mean": replicator.all_reduce(x, "mean"),
                "max": replicator.all_reduce(x, "max"), "min": replicator.all_reduce(x, "min"),
                "gather": replicator.all_gather(x), "bcast": replicator.broadcast(x, 2),
                "id": repl.replica_id}

    out = repl.run(step_fn)
    with tf.Session(config=repl.session_config()) as sess:
        got = sess.run(out)
        mean_loss = sess.run(repl.reduce([o["sum"] for o in out], "mean"))
    for replica, result in enumerate(got):
        assert result["id"] == replica
        np.testing.assert_allclose(result["sum"], values.sum(0), rtol=1e-6)
        np.testing.assert_allclose(result["mean"], values.mean(0), rtol=1e-6)
        np.testing.assert_array_equal(result["max"], values.max(0))
        np.testing.assert_array_equal(result["min"], values.min(0))
        np.testing.assert_array_equal(result["gather"], values.reshape(6, 4))
        np.testing.assert_array_equal(result["bcast"], values[2])
    np.testing.assert_allclose(mean_loss, values.sum(0), rtol=1e-6)


def test_gradients_through_primitives_are_those_of_the_summed_losses():
    """d(sum over replicas of loss_r)/dx_r, where loss_r uses every replica's x: NumPy's."""
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(2)
    values = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    weights = RNG.standard_normal((2, 6, 2)).astype(np.float32)

    def step_fn():
        x = tf.gather(tf.constant(values), repl.replica_id)
        w = tf.gather(tf.constant(weights), repl.replica_id)
        gathered = replicator.all_gather(x)
        loss = (tf.reduce_sum(tf.square(replicator.all_reduce(x, "mean")) * w[:3])
                + tf.reduce_sum(gathered * w) + tf.reduce_sum(replicator.broadcast(x, 1)))
        return tf.gradients(loss, x)[0]

    grads = repl.run(step_fn)
    with tf.Session(config=repl.session_config()) as sess:
        got = sess.run(grads)
    mean = values.mean(0)
    for replica in range(2):
        expected = sum(2 * mean * weights[r][:3] / 2 for r in range(2))
        expected = expected + sum(weights[r][3 * replica:3 * replica + 3] for r in range(2))
        expected = expected + (2.0 if replica == 1 else 0.0)
        np.testing.assert_allclose(got[replica], expected, rtol=1e-5, atol=1e-6)


def _kind_differs(first):
    x = tf.ones([2])
    return replicator.all_sum(x) if first else replicator.all_gather(x)


def _count_differs(first):
    x = tf.ones([2])
    return [replicator.all_sum(x)] + ([replicator.broadcast(x, 0)] if first else [])


def _shape_differs(first):
    return replicator.all_reduce(tf.ones([2 if first else 3, 4]), "max")


@pytest.mark.parametrize("replica_fn, message", [
    (_kind_differs, r"replica 0 call #0 all_reduce.*test_multi_device.py:\d+.*replica 1 "
                    r"call #0 all_gather"),
    (_count_differs, r"replica 0 made 2 cross-replica calls and replica 1 1: replica 0 call "
                     r"#1 broadcast"),
    (_shape_differs, r"replica 0 call #0 all_reduce\(float32\[2, 4\], 'max'\) at .*, but "
                     r"replica 1 call #0 all_reduce\(float32\[3, 4\]")],
    ids=["kind", "count", "shape"])
def test_a_mismatched_call_fails_at_build_time_naming_both_replicas(replica_fn, message):
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(2)
    with pytest.raises(ValueError, match=message):
        repl.run(lambda: replica_fn(repl.replica_id.op.name.startswith("replica_0")))


def test_bad_arguments_get_clear_errors():
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(2)
    with pytest.raises(RuntimeError, match="inside the step_fn"):
        replicator.all_sum(tf.ones([1]))
    with pytest.raises(ValueError, match="unknown op 'avg'"):
        repl.run(lambda: replicator.all_reduce(tf.ones([1]), "avg"))
    with pytest.raises(ValueError, match="mean of a int32 tensor"):
        repl.run(lambda: replicator.all_reduce(tf.ones([1], tf.int32), "mean"))
    with pytest.raises(ValueError, match="broadcast: root"):
        repl.run(lambda: replicator.broadcast(tf.ones([1]), 5))
    with pytest.raises(ValueError, match="replica 1's step_fn created the variables"):
        repl.run(lambda: tf.Variable(1.0) * 2)
    with pytest.raises(ValueError, match="devices"):
        replicator.MultiDeviceReplicator("/cpu:0")

    def fails_in_replica_1():
        summed = replicator.all_sum(tf.ones([1]))
        if repl.replica_id.op.name.startswith("replica_1"):
            raise KeyError("boom")
        return summed

    with pytest.raises(KeyError, match="boom"):
        repl.run(fails_in_replica_1)
    assert not primitives._PENDING  # failed builds leave no gather points behind


def test_a_scalar_variable_takes_adams_first_step():
    """Adam's first step is lr * g / (|g| + eps) with g the replicas' mean gradient (the
    averaged gradient of a scalar is a 0-d array: the Adam kernel must take it)."""
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(2)
    with repl.context():
        scale = tf.get_variable("scale", initializer=1.0)
        opt = repl.wrap_optimizer(tf.train.AdamOptimizer(0.1, epsilon=1e-8))

    def step_fn(x):
        return opt.minimize(tf.square(scale * x - 2.0))

    train = repl.run(step_fn, lambda replica_id: tf.constant(float(replica_id) + 1.0))
    with tf.Session(config=repl.session_config()) as sess:
        repl.init(sess)
        sess.run(train)
        got = sess.run(scale)
    grad = np.mean([2 * (1.0 * x - 2.0) * x for x in (1.0, 2.0)])
    np.testing.assert_allclose(got, 1.0 - 0.1 * grad / (abs(grad) + 1e-8), rtol=1e-6)


def test_the_papers_usage_with_a_monitored_session():
    """repl.run's per-replica losses reduced with tf.reduce_mean, trained in a
    MonitoredSession (which initialises the variables; repl.init then leaves them)."""
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(2)
    with repl.context():
        weight = tf.get_variable("weight", initializer=np.float32([[0.0], [0.0]]))
        optimizer = repl.wrap_optimizer(tf.train.GradientDescentOptimizer(0.5))
    data = np.float32([[1, 0], [0, 1], [1, 1], [2, 1]])
    targets = data @ np.float32([[1.0], [-2.0]])

    def input_fn(replica_id):
        return tf.data.Dataset.from_tensor_slices((data, targets)).repeat().batch(2)

    def step_fn(inputs):
        x, y = inputs
        loss = tf.reduce_mean(tf.square(tf.matmul(x, weight) - y))
        with tf.control_dependencies([optimizer.minimize(loss)]):
            return tf.identity(loss)

    train_op = tf.reduce_mean(repl.run(step_fn, input_fn))
    creator = tf.train.ChiefSessionCreator(config=repl.session_config())
    with tf.train.MonitoredSession(session_creator=creator) as session:
        repl.init(session)
        for _ in range(200):
            session.run(train_op)
        got = session.run(weight)
        repl.shutdown(session)
    np.testing.assert_allclose(got, [[1.0], [-2.0]], atol=1e-3)


@pytest.mark.parametrize("input_mode", ["per_replica", "per_worker"])
def test_dataset_input_in_both_modes_gives_the_big_batch_steps(input_mode):
    """Sharded per replica, or one iterator the replicas take turns on: each step the two
    replicas see the 8 examples one replica of batch 8 sees, so the steps are the same."""
    params = {}
    for replicas in (1, 2):
        tf.reset_default_graph()
        repl = replicator.MultiDeviceReplicator(replicas, input_mode=input_mode)
        with tf.Session(config=repl.session_config()) as sess:
            params[replicas] = model_util.train(repl, sess, 6, "adam")
    for two, one in zip(params[2], params[1]):
        np.testing.assert_allclose(two, one, rtol=1e-5, atol=1e-6)
