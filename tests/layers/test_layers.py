"""tf.layers: variables (names, shapes, sharing, initializers, regularizers), outputs against
NumPy, training flags as Python bools and as tensors, and batch norm's update ops."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker
from tests.ops import conv_reference as ref


def _run(fetches, feeds=None, local=False):
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        if local:
            session.run(tf.local_variables_initializer())
        return session.run(fetches, feeds)


def _names(variables):
    return [v.name for v in variables]


# --- dense ---------------------------------------------------------------------------------------
def test_dense_computes_activation_of_xw_plus_b_with_named_variables():
    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 4, activation=tf.nn.relu,
                        kernel_initializer=tf.constant_initializer(rng.standard_normal((3, 4))),
                        bias_initializer=tf.constant_initializer(0.5))
    assert y.shape.as_list() == [None, 4]
    assert _names(tf.trainable_variables()) == ["dense/kernel:0", "dense/bias:0"]
    kernel = tf.trainable_variables()[0]
    value = rng.standard_normal((5, 3)).astype(np.float32)
    got, w = _run([y, kernel], {x: value})
    np.testing.assert_allclose(got, np.maximum(value @ w + 0.5, 0), rtol=1e-5)


def test_dense_names_are_unique_and_reuse_shares_variables():
    x = tf.placeholder(tf.float32, [2, 3])
    tf.layers.dense(x, 2)
    tf.layers.dense(x, 2)
    first = tf.layers.dense(x, 2, name="shared")
    second = tf.layers.dense(x, 2, name="shared", reuse=True)
    assert _names(tf.global_variables()) == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
        "shared/kernel:0", "shared/bias:0"]
    with pytest.raises(ValueError, match="shared/kernel already exists"):
        tf.layers.dense(x, 2, name="shared")
    a, b = _run([first, second], {x: np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(a, b)


def test_dense_layer_object_called_twice_shares_its_variables_and_handles_rank_3():
    layer = tf.layers.Dense(3, use_bias=False, name="proj")
    x = tf.placeholder(tf.float32, [2, 5, 4])
    y = layer(x)
    z = layer(tf.ones([1, 4]))
    assert y.shape.as_list() == [2, 5, 3] and z.shape.as_list() == [1, 3]
    assert _names(layer.trainable_weights) == ["proj/kernel:0"] == _names(tf.global_variables())
    value = np.random.default_rng(1).standard_normal((2, 5, 4)).astype(np.float32)
    got, w = _run([y, layer.kernel], {x: value})
    np.testing.assert_allclose(got, value @ w, rtol=1e-5, atol=1e-6)


def test_dense_errors_name_the_layer_and_the_shape():
    with pytest.raises(ValueError, match=r"Dense dense: the last dimension.*\(2, \?\)"):
        tf.layers.dense(tf.placeholder(tf.float32, [2, None]), 3)
    with pytest.raises(ValueError, match="units must be a positive int"):
        tf.layers.Dense(0)


def test_regularizers_collect_losses_and_enter_the_total_loss():
    x = tf.ones([2, 3])
    layer = tf.layers.Dense(2, kernel_initializer=tf.constant_initializer(2.0),
                            kernel_regularizer=tf.layers.l2_regularizer(0.1),
                            bias_regularizer=tf.layers.l1_regularizer(0.0))
    y = layer(x)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1 and layer.losses == losses  # scale 0 adds nothing
    tf.losses.mean_squared_error(tf.zeros([2, 2]), y)
    total, reg, mse = _run([tf.losses.get_total_loss(), tf.losses.get_regularization_loss(),
                            tf.losses.get_losses()[0]])
    np.testing.assert_allclose(reg, 0.1 * 6 * 4 / 2)
    np.testing.assert_allclose(total, reg + mse, rtol=1e-6)


def test_regularizer_values_and_errors():
    w = tf.constant([[1.0, -2.0], [3.0, 0.5]])
    l1, l2, both = _run([tf.layers.l1_regularizer(0.5)(w), tf.layers.l2_regularizer(0.5)(w),
                         tf.layers.l1_l2_regularizer(0.5, 0.5)(w)])
    np.testing.assert_allclose([l1, l2, both], [3.25, 0.5 * 14.25 / 2, 3.25 + 3.5625])
    with pytest.raises(ValueError, match="scale must be >= 0"):
        tf.layers.l2_regularizer(-1.0)
    assert tf.layers.l2_regularizer(0.0)(w) is None


def test_non_trainable_layer_keeps_its_variables_out_of_trainable_variables():
    tf.layers.dense(tf.ones([1, 2]), 2, trainable=False)
    assert tf.trainable_variables() == []
    assert len(tf.global_variables()) == 2


# --- conv2d, pooling, flatten --------------------------------------------------------------------
@pytest.mark.parametrize("data_format,padding,strides", [("channels_last", "same", 1),
                                                         ("channels_last", "valid", 2),
                                                         ("channels_first", "same", (1, 2))])
def test_conv2d_layer_matches_the_reference(data_format, padding, strides):
    rng = np.random.default_rng(2)
    nhwc = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    value = ref.nchw(nhwc) if data_format == "channels_first" else nhwc
    x = tf.placeholder(tf.float32, value.shape)
    y = tf.layers.conv2d(x, 4, (3, 2), strides=strides, padding=padding, data_format=data_format,
                         activation=tf.nn.relu, bias_initializer=tf.constant_initializer(0.1))
    assert _names(tf.trainable_variables()) == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert tf.trainable_variables()[0].shape.as_list() == [3, 2, 3, 4]
    got, kernel = _run([y, tf.trainable_variables()[0]], {x: value})
    stride_pair = (strides, strides) if isinstance(strides, int) else strides
    want = np.maximum(ref.conv2d(nhwc.astype(np.float64), kernel, stride_pair,
                                 padding.upper()) + 0.1, 0)
    if data_format == "channels_first":
        want = ref.nchw(want)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_conv2d_layer_argument_errors():
    x = tf.placeholder(tf.float32, [1, 5, 5, 3])
    with pytest.raises(ValueError, match="padding.*'valid' or 'same'.*'full'"):
        tf.layers.conv2d(x, 2, 3, padding="full")
    with pytest.raises(ValueError, match="kernel_size.*tuple of 2 ints"):
        tf.layers.conv2d(x, 2, (3, 3, 3))
    with pytest.raises(ValueError, match="data_format"):
        tf.layers.conv2d(x, 2, 3, data_format="NHWC")
    with pytest.raises(ValueError, match="rank 4"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [5, 5, 3]), 2, 3)


@pytest.mark.parametrize("layer,reference", [
    (tf.layers.max_pooling2d, ref.max_pool), (tf.layers.average_pooling2d, ref.avg_pool)])
def test_pooling_layers_match_the_reference(layer, reference):
    value = np.random.default_rng(3).standard_normal((2, 5, 6, 3)).astype(np.float32)
    x = tf.placeholder(tf.float32, value.shape)
    y = layer(x, pool_size=(2, 3), strides=2, padding="same")
    got = _run(y, {x: value})
    np.testing.assert_allclose(got, reference(value.astype(np.float64), (2, 3), (2, 2), "SAME"),
                               rtol=1e-5, atol=1e-6)


def test_flatten_static_dynamic_and_channels_first():
    value = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2)
    static = tf.layers.flatten(tf.constant(value))
    dynamic_input = tf.placeholder(tf.float32, [None, None, 2, 2])
    dynamic = tf.layers.flatten(dynamic_input)
    first = tf.layers.flatten(tf.constant(value), data_format="channels_first")
    assert static.shape.as_list() == [2, 12]
    got_static, got_dynamic, got_first = _run([static, dynamic, first], {dynamic_input: value})
    np.testing.assert_array_equal(got_static, value.reshape(2, 12))
    np.testing.assert_array_equal(got_dynamic, value.reshape(2, 12))
    np.testing.assert_array_equal(got_first, value.transpose(0, 2, 3, 1).reshape(2, 12))


# --- dropout -------------------------------------------------------------------------------------
def test_dropout_layer_training_flag_as_bool_and_tensor():
    x = tf.ones([100, 100])
    assert tf.layers.dropout(x, 0.5).op.type == "Identity"  # training=False by default
    training = tf.placeholder(tf.bool, [])
    flagged = tf.layers.dropout(x, 0.5, training=training, seed=1)
    always = tf.layers.dropout(x, 0.5, training=True, seed=1)
    on, off, fixed = _run([flagged, flagged, always], {training: True})
    assert abs(np.mean(on > 0) - 0.5) < 0.03 and set(np.unique(on)) <= {0.0, 2.0}
    assert abs(np.mean(fixed > 0) - 0.5) < 0.03
    np.testing.assert_array_equal(_run(flagged, {training: False}), np.ones([100, 100]))
    del off


# --- batch normalisation -------------------------------------------------------------------------
def _batch():
    return np.random.default_rng(4).normal(3.0, 2.0, size=(8, 3, 3, 2)).astype(np.float32)


def test_batch_norm_training_normalises_and_updates_the_moving_statistics():
    value = _batch()
    x = tf.placeholder(tf.float32, value.shape)
    y = tf.layers.batch_normalization(x, momentum=0.9, training=True)
    names = _names(tf.global_variables())
    assert names == ["batch_normalization/gamma:0", "batch_normalization/beta:0",
                     "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert _names(tf.trainable_variables()) == names[:2]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    moving = tf.global_variables()[2:]
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        out, _ = session.run([y, updates], {x: value})
        mean, variance = session.run(moving)
    np.testing.assert_allclose(out.mean(axis=(0, 1, 2)), 0, atol=1e-5)
    np.testing.assert_allclose(out.var(axis=(0, 1, 2)), value.var(axis=(0, 1, 2)) / (
        value.var(axis=(0, 1, 2)) + 1e-3), rtol=1e-4)
    n = 8 * 3 * 3
    np.testing.assert_allclose(mean, 0.1 * value.mean(axis=(0, 1, 2)), rtol=1e-5)
    np.testing.assert_allclose(variance, 0.9 + 0.1 * value.var(axis=(0, 1, 2)) * n / (n - 1),
                               rtol=1e-5)


def test_batch_norm_inference_uses_the_moving_statistics_and_makes_no_updates():
    value = _batch()
    y = tf.layers.batch_normalization(tf.constant(value), training=False, epsilon=0.0)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    np.testing.assert_allclose(_run(y), value, rtol=1e-6)  # moving mean 0, variance 1


def test_batch_norm_training_tensor_selects_statistics_and_freezes_updates_when_false():
    value = _batch()
    x = tf.placeholder(tf.float32, value.shape)
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, axis=3, training=training, epsilon=0.0)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    moving = tf.global_variables()[2:]
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        frozen, _ = session.run([y, updates], {x: value, training: False})
        np.testing.assert_allclose(frozen, value, rtol=1e-6)
        np.testing.assert_allclose(session.run(moving[0]), 0)
        trained, _ = session.run([y, updates], {x: value, training: True})
        np.testing.assert_allclose(trained.mean(axis=(0, 1, 2)), 0, atol=1e-5)
        assert np.all(session.run(moving[0]) != 0)


def test_batch_norm_channels_first_axis_1_and_its_input_gradient():
    value = _batch().transpose(0, 3, 1, 2)
    y = tf.layers.batch_normalization(tf.constant(value), axis=1, training=True)
    out = _run(y)
    np.testing.assert_allclose(out.mean(axis=(0, 2, 3)), 0, atol=1e-5)

    x = tf.placeholder(tf.float64, [3, 2, 2, 2])
    normalised = tf.layers.batch_normalization(x, axis=1, training=True,
                                               gamma_initializer=tf.constant_initializer(1.5))
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        with session.as_default():
            error = gradient_checker.compute_gradient_error(
                x, [3, 2, 2, 2], normalised, [3, 2, 2, 2],
                x_init_value=np.random.default_rng(5).normal(size=(3, 2, 2, 2)), delta=1e-5)
    assert error < 1e-6, error


def test_layer_objects_with_a_given_name_are_made_unique_as_in_tf():
    """tf.layers.Dense(name="proj") twice in one scope gives proj and proj_1 (TF 1.x makes a
    layer object's name unique); the functional form opens the name as is (see above)."""
    x = tf.placeholder(tf.float32, [2, 3])
    tf.layers.Dense(2, name="proj")(x)
    tf.layers.Dense(2, name="proj")(x)
    with tf.variable_scope("outer"):
        tf.layers.Dense(2, name="proj")(x)
    with tf.variable_scope("outer", reuse=True):
        shared = tf.layers.Dense(2, name="proj")
        shared(x)
    assert _names(tf.global_variables()) == [
        "proj/kernel:0", "proj/bias:0", "proj_1/kernel:0", "proj_1/bias:0",
        "outer/proj/kernel:0", "outer/proj/bias:0"]
    assert _names(shared.weights) == ["outer/proj/kernel:0", "outer/proj/bias:0"]
