"""tf.contrib.opt as a namespace: the names TF 1.x programs use, slot names as TF's, the
decay_var_list argument, and errors for bad arguments naming the argument."""
import numpy as np
import pytest

import tensorweave as tf

copt = tf.contrib.opt


def test_contrib_opt_resolves_and_lists():
    assert "opt" in dir(tf.contrib)
    for name in ["AdamWOptimizer", "MomentumWOptimizer", "DecoupledWeightDecayExtension",
                 "extend_with_decoupled_weight_decay", "LazyAdamOptimizer", "NadamOptimizer",
                 "AddSignOptimizer", "PowerSignOptimizer", "LARSOptimizer",
                 "MovingAverageOptimizer", "VariableClippingOptimizer",
                 "DropStaleGradientOptimizer", "ElasticAverageOptimizer",
                 "ElasticAverageCustomGetter", "ModelAverageOptimizer",
                 "ModelAverageCustomGetter", "AdaMaxOptimizer", "get_linear_decay_fn",
                 "get_cosine_decay_fn", "get_restart_decay_fn", "RegAdagradOptimizer",
                 "MultitaskOptimizerWrapper", "clip_gradients_by_global_norm",
                 "AdamGSOptimizer", "LazyAdamGSOptimizer"]:
        assert hasattr(copt, name), name
    assert issubclass(copt.AdamWOptimizer, tf.train.AdamOptimizer)
    assert issubclass(copt.NadamOptimizer, tf.train.AdamOptimizer)


@pytest.mark.parametrize("make_optimizer, slot_names", [
    (lambda: copt.AdamWOptimizer(0.01), ["m", "v"]),
    (lambda: copt.MomentumWOptimizer(0.01, 0.1, 0.9), ["momentum"]),
    (lambda: copt.LazyAdamOptimizer(), ["m", "v"]),
    (lambda: copt.NadamOptimizer(), ["m", "v"]),
    (lambda: copt.AddSignOptimizer(), ["m"]),
    (lambda: copt.PowerSignOptimizer(), ["m"]),
    (lambda: copt.LARSOptimizer(0.1), ["momentum"]),
    (lambda: copt.AdaMaxOptimizer(), ["m", "v"]),
    (lambda: copt.AdamGSOptimizer(), ["m", "v"]),
    (lambda: copt.LazyAdamGSOptimizer(), ["m", "v"]),
])
def test_slot_names_are_tfs(make_optimizer, slot_names):
    var = tf.Variable([1.0, 2.0])
    optimizer = make_optimizer()
    optimizer.minimize(tf.reduce_sum(var * var))
    assert optimizer.get_slot_names() == slot_names
    for name in slot_names:
        slot = optimizer.get_slot(var, name)
        assert slot.shape.as_list() == [2] and not slot.trainable


@pytest.mark.parametrize("through", ["minimize", "apply_gradients"])
def test_decay_var_list_limits_the_decay(through):
    weight_decay, lr = 0.1, 0.5
    decayed = tf.Variable([1.0, -2.0], dtype=tf.float64)
    kept = tf.Variable([3.0, 4.0], dtype=tf.float64)
    loss = tf.reduce_sum(decayed) + tf.reduce_sum(kept)  # both gradients are ones
    optimizer = copt.extend_with_decoupled_weight_decay(tf.train.GradientDescentOptimizer)(
        weight_decay, learning_rate=lr)
    if through == "minimize":
        train_op = optimizer.minimize(loss, decay_var_list=[decayed])
    else:
        train_op = optimizer.apply_gradients(optimizer.compute_gradients(loss),
                                             decay_var_list=[decayed])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        got_decayed, got_kept = sess.run([decayed, kept])
    np.testing.assert_allclose(got_decayed, np.array([1.0, -2.0]) * (1 - weight_decay) - lr)
    np.testing.assert_allclose(got_kept, np.array([3.0, 4.0]) - lr)


def test_weight_decay_may_be_a_tensor_and_positional_arguments_work():
    var = tf.Variable([2.0], dtype=tf.float64)
    schedule = tf.placeholder(tf.float64, shape=[])
    optimizer = copt.extend_with_decoupled_weight_decay(tf.train.MomentumOptimizer)(
        schedule, 0.5, 0.0)
    train_op = optimizer.minimize(tf.reduce_sum(var) * 0.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {schedule: 0.25})
        sess.run(train_op, {schedule: 0.5})
        np.testing.assert_allclose(sess.run(var), [2.0 * 0.75 * 0.5])


@pytest.mark.parametrize("build, error, message", [
    (lambda: copt.LARSOptimizer(0.1, momentum=-0.5), ValueError, "momentum"),
    (lambda: copt.LARSOptimizer(0.1, weight_decay=-1.0), ValueError, "weight_decay"),
    (lambda: copt.LARSOptimizer(0.1, skip_list="bias"), TypeError, "skip_list"),
    (lambda: copt.PowerSignOptimizer(base=0.0), ValueError, "base"),
    (lambda: copt.AddSignOptimizer(sign_decay_fn=0.5), TypeError, "sign_decay_fn"),
    (lambda: copt.get_linear_decay_fn(0), ValueError, "decay_steps"),
    (lambda: copt.get_cosine_decay_fn(10)(None), ValueError, "global_step is required"),
    (lambda: copt.extend_with_decoupled_weight_decay("adam"), TypeError, "base_optimizer"),
    (lambda: copt.extend_with_decoupled_weight_decay(tf.train.GradientDescentOptimizer)(
        0.1, 0.5, False, "name", "extra"), TypeError, "arguments after weight_decay"),
    (lambda: copt.AdamWOptimizer(0.1).minimize(tf.reduce_sum(tf.Variable([1.0])),
                                               decay_var_list=3), TypeError,
     "decay_var_list"),
])
def test_bad_arguments_name_the_argument(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_sign_decay_fn_receives_the_global_step():
    seen = []

    def sign_decay_fn(global_step):
        seen.append(global_step)
        return 0.5

    var = tf.Variable([1.0])
    step = tf.train.get_or_create_global_step()
    copt.AddSignOptimizer(sign_decay_fn=sign_decay_fn).minimize(tf.reduce_sum(var),
                                                                global_step=step)
    assert seen == [step]


STEPS = np.array([0, 1, 3, 5, 7, 10, 12])


@pytest.mark.parametrize("make_fn, reference", [
    (lambda: copt.get_linear_decay_fn(10), lambda t: 1 - np.minimum(t, 10) / 10),
    (lambda: copt.get_cosine_decay_fn(10),
     lambda t: 0.5 * (1 + np.cos(np.pi * np.minimum(t, 10) / 10))),
    (lambda: copt.get_cosine_decay_fn(10, num_periods=1.0, zero_after=0.6),
     lambda t: np.where(2 * np.minimum(t, 10) / 10 >= 1.2, 0.0,
                        0.5 * (1 + np.cos(np.pi * 2 * np.minimum(t, 10) / 10)))),
    (lambda: copt.get_restart_decay_fn(10, num_periods=2),
     lambda t: 0.5 * (1 + np.cos(np.pi * np.mod(2 * np.minimum(t, 10), 10) / 10))),
    (lambda: copt.get_restart_decay_fn(10, num_periods=2, zero_after=1.2),
     lambda t: np.where(2 * np.minimum(t, 10) / 10 >= 1.2, 0.0,
                        0.5 * (1 + np.cos(np.pi * np.mod(2 * np.minimum(t, 10), 10) / 10)))),
])
def test_sign_decay_schedules_match_numpy(make_fn, reference):
    step = tf.placeholder(tf.int64, shape=[])
    decayed = make_fn()(step)
    assert decayed.dtype == tf.float32
    with tf.Session() as sess:
        got = [sess.run(decayed, {step: t}) for t in STEPS]
    np.testing.assert_allclose(got, reference(STEPS.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_adam_gs_keeps_no_beta_power_variables():
    var = tf.Variable([1.0, 2.0])
    optimizer = copt.AdamGSOptimizer(tf.train.get_or_create_global_step())
    optimizer.minimize(tf.reduce_sum(var))
    assert sorted(v.op.name for v in optimizer.variables()) == ["Variable/Adam_m",
                                                                "Variable/Adam_v"]
