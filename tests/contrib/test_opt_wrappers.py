"""tf.contrib.opt's wrapper optimizers: moving averages with the swapping saver, variable
clipping, dropping stale gradients; against NumPy references and closed-form answers."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.contrib.opt import (DropStaleGradientOptimizer, MovingAverageOptimizer,
                                     VariableClippingOptimizer)

INIT = np.array([[3.0, 4.0], [0.3, 0.4], [-6.0, 8.0]])
GRADS = [np.array([[1.0, -2.0], [0.5, 0.5], [2.0, 1.0]]) * scale for scale in (1.0, -0.5, 2.0)]


def _sgd_trajectory(lr):
    var, trajectory = INIT.copy(), []
    for grad in GRADS:
        var = var - lr * grad
        trajectory.append(var)
    return trajectory


def _linear_loss(var):
    fed = tf.placeholder(tf.float64, shape=INIT.shape)
    return fed, tf.reduce_sum(var * fed)


# --- MovingAverageOptimizer ------------------------------------------------------------------
@pytest.mark.parametrize("num_updates", [None, "global_step"])
def test_moving_average_swapping_saver_saves_the_averages(tmp_path, num_updates):
    decay, lr = 0.5, 0.1
    with tf.Graph().as_default():
        var = tf.Variable(INIT, name="weights")
        fed, loss = _linear_loss(var)
        step = tf.train.get_or_create_global_step()
        optimizer = MovingAverageOptimizer(tf.train.GradientDescentOptimizer(lr),
                                           average_decay=decay,
                                           num_updates=step if num_updates else None)
        with pytest.raises(RuntimeError, match="apply_gradients or minimize first"):
            optimizer.swapping_saver()
        train_op = optimizer.minimize(loss, global_step=step)
        saver = optimizer.swapping_saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for grad in GRADS:
                sess.run(train_op, {fed: grad})
            trained = sess.run(var)
            path = saver.save(sess, str(tmp_path / "model"))
    average, want_trained = INIT.copy(), _sgd_trajectory(lr)
    # With sequential updates the averages run after the step, so they read the global step
    # already incremented: num_updates is 1 at the first step.
    for count, value in enumerate(want_trained, start=1):
        rate = min(decay, (1.0 + count) / (10.0 + count)) if num_updates else decay
        average = average - (1 - rate) * (average - value)
    np.testing.assert_allclose(trained, want_trained[-1], rtol=1e-12)
    with tf.Graph().as_default():  # an evaluation program: a plain Saver, no averaging
        var = tf.Variable(np.zeros_like(INIT), name="weights")
        with tf.Session() as sess:
            tf.train.Saver([var]).restore(sess, path)
            # the decay is a float32 tensor (as in TF's ExponentialMovingAverage)
            np.testing.assert_allclose(sess.run(var), average, rtol=1e-7)
    reader = tf.train.NewCheckpointReader(path)
    np.testing.assert_allclose(reader.get_tensor("weights/ExponentialMovingAverage"),
                               trained, rtol=1e-12)


def test_moving_average_delegates_slots():
    with tf.Graph().as_default():
        var = tf.Variable(INIT)
        fed, loss = _linear_loss(var)
        optimizer = MovingAverageOptimizer(tf.train.MomentumOptimizer(0.1, 0.9))
        optimizer.minimize(loss)
        assert optimizer.get_slot_names() == ["momentum"]
        assert optimizer.get_slot(var, "momentum") is not None
    with pytest.raises(TypeError, match="opt must be a tf.train.Optimizer"):
        MovingAverageOptimizer("sgd")
    with pytest.raises(ValueError, match="average_decay"):
        MovingAverageOptimizer(tf.train.GradientDescentOptimizer(0.1), average_decay=1.5)


# --- VariableClippingOptimizer ---------------------------------------------------------------
def _clip_rows(value, max_norm, rows=None):
    value = value.copy()
    rows = range(len(value)) if rows is None else rows
    for row in rows:
        norm = np.linalg.norm(value[row])
        value[row] *= max_norm / max(norm, max_norm)
    return value


@pytest.mark.parametrize("clip_dims, max_norm", [([1], 2.0), ([0, 1], 3.0), ([0], 1.0)])
def test_variable_clipping_dense_clips_after_each_update(clip_dims, max_norm):
    lr = 0.1
    with tf.Graph().as_default():
        var = tf.Variable(INIT)
        fed, loss = _linear_loss(var)
        train_op = VariableClippingOptimizer(tf.train.GradientDescentOptimizer(lr),
                                             {var: clip_dims}, max_norm).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = INIT.copy()
            for grad in GRADS:
                sess.run(train_op, {fed: grad})
                want = want - lr * grad
                norm = np.sqrt(np.sum(want * want, axis=tuple(clip_dims), keepdims=True))
                want = want * max_norm / np.maximum(norm, max_norm)
                np.testing.assert_allclose(sess.run(var), want, rtol=1e-12)


def test_variable_clipping_sparse_clips_only_touched_rows():
    lr, max_norm, ids = 0.1, 1.0, np.array([2, 0, 2])
    with tf.Graph().as_default():
        var = tf.Variable(INIT)
        fed = tf.placeholder(tf.float64, shape=[len(ids), 2])
        loss = tf.reduce_sum(tf.nn.embedding_lookup(var, ids) * fed)
        train_op = VariableClippingOptimizer(tf.train.GradientDescentOptimizer(lr),
                                             {var: [1]}, max_norm).minimize(loss)
        rows = np.array([[1.0, 1.0], [-1.0, 0.5], [0.5, 0.5]])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, {fed: rows})
            updated = INIT.copy()
            np.add.at(updated, ids, -lr * rows)
            want = _clip_rows(updated, max_norm, rows=[0, 2])
            got = sess.run(var)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.linalg.norm(got[1]) < max_norm  # row 1 untouched (and under the norm anyway)
    np.testing.assert_array_equal(got[1], INIT[1])


def test_variable_clipping_bad_arguments():
    sgd = tf.train.GradientDescentOptimizer(0.1)
    var = tf.Variable(INIT)
    with pytest.raises(TypeError, match="vars_to_clip_dims must be a dict"):
        VariableClippingOptimizer(sgd, [var], 1.0)
    with pytest.raises(ValueError, match=r"vars_to_clip_dims\[Variable\]"):
        VariableClippingOptimizer(sgd, {var: [2]}, 1.0)
    with pytest.raises(ValueError, match="max_norm must be positive"):
        VariableClippingOptimizer(sgd, {var: [1]}, 0.0)


# --- DropStaleGradientOptimizer --------------------------------------------------------------
def _stale_training(staleness, lag):
    """One step in which the global step advances by `lag` between computing and applying
    the gradients (another worker's updates, made deterministic): (var, global step,
    counter) after it."""
    lr = 0.5
    with tf.Graph().as_default():
        var = tf.Variable(np.array([1.0, 2.0]))
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_sum(var * np.array([1.0, -1.0]))
        optimizer = DropStaleGradientOptimizer(tf.train.GradientDescentOptimizer(lr),
                                               staleness)
        grads_and_vars = optimizer.compute_gradients(loss)
        with tf.control_dependencies([optimizer._local_step]):
            other_workers = tf.assign_add(step, tf.constant(lag, tf.int64))
        with tf.control_dependencies([other_workers]):
            grads_and_vars = [(tf.identity(grad), v) for grad, v in grads_and_vars]
        counter_update = optimizer.apply_gradients(grads_and_vars, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            counter = sess.run(counter_update)
            return sess.run(var), sess.run(step), counter


@pytest.mark.parametrize("staleness, lag, applied", [(0, 0, True), (2, 2, True),
                                                     (2, 3, False), (0, 1, False)])
def test_drop_stale_gradients(staleness, lag, applied):
    var, step, counter = _stale_training(staleness, lag)
    if applied:
        np.testing.assert_allclose(var, [0.5, 2.5])
        assert step == lag + 1 and counter == 0.0
    else:
        np.testing.assert_array_equal(var, [1.0, 2.0])
        assert step == lag and counter == 1.0


def test_drop_stale_counts_over_steps_and_keeps_slots():
    with tf.Graph().as_default():
        var = tf.Variable(np.array([1.0, 2.0]))
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_sum(var * var)
        optimizer = DropStaleGradientOptimizer(tf.train.MomentumOptimizer(0.1, 0.9), 1)
        train_op = optimizer.minimize(loss, global_step=step)
        assert optimizer.get_slot_names() == ["momentum"]
        counter = [v for v in tf.global_variables() if v.op.name == "stale_counter"]
        assert len(counter) == 1
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                assert sess.run(train_op) == 0.0
            assert sess.run(step) == 3
            assert sess.run(counter[0]) == 0.0


def test_drop_stale_bad_arguments():
    sgd = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="staleness must be a non-negative int"):
        DropStaleGradientOptimizer(sgd, -1)
    with pytest.raises(ValueError, match="staleness must be a non-negative int"):
        DropStaleGradientOptimizer(sgd, 1.5)
    var = tf.Variable([1.0])
    optimizer = DropStaleGradientOptimizer(sgd, 1)
    with pytest.raises(ValueError, match="no global step"):
        optimizer.compute_gradients(tf.reduce_sum(var))
    with pytest.raises(ValueError, match="global_step is required"):
        optimizer.apply_gradients([(tf.constant([1.0]), var)])
