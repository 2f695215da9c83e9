"""tf.layers' 1-D / 3-D / transposed / separable convolution and pooling layers: variable names
and shapes as TF 1.x gives them, outputs against the loop references, static output shapes
(also with an unknown batch size), and InputSpec checks naming the layer."""
import numpy as np
import pytest

import tensorweave as tf
from tests.ops import conv3d_reference as ref3
from tests.ops import conv_reference as ref


def _run(fetches, feeds=None):
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        return session.run(fetches, feeds)


def _variables():
    return [(v.name, v.shape.as_list()) for v in tf.global_variables()]


def _random(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_conv1d_layer(data_format):
    nwc = _random((2, 9, 3))
    value = nwc.transpose(0, 2, 1) if data_format == "channels_first" else nwc
    y = tf.layers.conv1d(tf.constant(value), 4, 3, strides=2, padding="same",
                         data_format=data_format, bias_initializer=tf.constant_initializer(0.5))
    assert _variables() == [("conv1d/kernel:0", [3, 3, 4]), ("conv1d/bias:0", [4])]
    got, kernel = _run([y, tf.global_variables()[0]])
    want = ref.conv2d(nwc[:, None].astype(np.float64), kernel[None], (1, 2), "SAME")[:, 0] + 0.5
    if data_format == "channels_first":
        want = want.transpose(0, 2, 1)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_conv3d_layer(data_format):
    ndhwc = _random((2, 4, 5, 3, 2))
    value = ref3.ncdhw(ndhwc) if data_format == "channels_first" else ndhwc
    x = tf.placeholder(tf.float32, (None,) + value.shape[1:])
    y = tf.layers.conv3d(x, 3, (2, 3, 2), strides=(1, 2, 1), data_format=data_format,
                         activation=tf.nn.relu, name="c3")
    assert _variables() == [("c3/kernel:0", [2, 3, 2, 2, 3]), ("c3/bias:0", [3])]
    got, kernel = _run([y, tf.global_variables()[0]], {x: value})
    want = np.maximum(ref3.conv3d(ndhwc.astype(np.float64), kernel, (1, 2, 1), "VALID"), 0)
    if data_format == "channels_first":
        want = ref3.ncdhw(want)
    assert y.shape.as_list() == [None] + list(want.shape[1:])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("padding,strides,size", [("same", 2, 8), ("valid", 2, 9),
                                                  ("valid", 1, 6)])
def test_conv2d_transpose_layer(padding, strides, size):
    value = _random((2, 4, 4, 3))
    x = tf.placeholder(tf.float32, [None, 4, 4, 3])
    y = tf.layers.conv2d_transpose(x, 5, 3, strides=strides, padding=padding)
    assert _variables() == [("conv2d_transpose/kernel:0", [3, 3, 5, 3]),
                            ("conv2d_transpose/bias:0", [5])]
    assert y.shape.as_list() == [None, size, size, 5]
    got, kernel = _run([y, tf.global_variables()[0]], {x: value})
    want = ref.conv2d_backprop_input((2, size, size, 5), kernel, value.astype(np.float64),
                                     (strides, strides), padding.upper())
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_conv2d_transpose_with_unknown_spatial_sizes_and_channels_first():
    value = _random((1, 3, 4, 5))
    x = tf.placeholder(tf.float32, [None, 3, None, None])
    y = tf.layers.conv2d_transpose(x, 2, (2, 3), strides=(2, 1), data_format="channels_first",
                                   use_bias=False)
    got, kernel = _run([y, tf.global_variables()[0]], {x: value})
    assert got.shape == (1, 2, 8, 7)
    want = ref.conv2d_backprop_input((1, 8, 7, 2), kernel, ref.nhwc(value).astype(np.float64),
                                     (2, 1), "VALID")
    np.testing.assert_allclose(got, ref.nchw(want), rtol=1e-4, atol=1e-5)


def test_conv3d_transpose_layer():
    value = _random((1, 2, 3, 2, 4))
    y = tf.layers.conv3d_transpose(tf.constant(value), 2, 2, strides=2, padding="same")
    assert _variables() == [("conv3d_transpose/kernel:0", [2, 2, 2, 2, 4]),
                            ("conv3d_transpose/bias:0", [2])]
    assert y.shape.as_list() == [1, 4, 6, 4, 2]
    got, kernel = _run([y, tf.global_variables()[0]])
    want = ref3.conv3d_backprop_input((1, 4, 6, 4, 2), kernel, value.astype(np.float64),
                                      (2, 2, 2), "SAME")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _separable_ref(x, depthwise, pointwise, strides, padding, dilations=(1, 1)):
    mid = ref.depthwise_conv2d(x, depthwise, strides, padding, dilations)
    return np.einsum("nhwc,co->nhwo", mid, pointwise[0, 0])


def test_separable_conv2d_layer():
    value = _random((2, 6, 6, 3))
    y = tf.layers.separable_conv2d(tf.constant(value), 4, 3, strides=(2, 2), padding="same",
                                   depth_multiplier=2)
    assert _variables() == [("separable_conv2d/depthwise_kernel:0", [3, 3, 3, 2]),
                            ("separable_conv2d/pointwise_kernel:0", [1, 1, 6, 4]),
                            ("separable_conv2d/bias:0", [4])]
    got, depthwise, pointwise = _run([y] + tf.global_variables()[:2])
    want = _separable_ref(value.astype(np.float64), depthwise, pointwise, (2, 2), "SAME")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_separable_conv1d_layer(data_format):
    nwc = _random((2, 8, 2))
    value = nwc.transpose(0, 2, 1) if data_format == "channels_first" else nwc
    y = tf.layers.separable_conv1d(tf.constant(value), 3, 3, dilation_rate=2,
                                   data_format=data_format)
    assert _variables() == [("separable_conv1d/depthwise_kernel:0", [3, 2, 1]),
                            ("separable_conv1d/pointwise_kernel:0", [1, 2, 3]),
                            ("separable_conv1d/bias:0", [3])]
    got, depthwise, pointwise = _run([y] + tf.global_variables()[:2])
    want = _separable_ref(nwc[:, None].astype(np.float64), depthwise[None], pointwise[None],
                          (1, 1), "VALID", (1, 2))[:, 0]
    if data_format == "channels_first":
        want = want.transpose(0, 2, 1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layer,reference", [
    (tf.layers.max_pooling1d, ref.max_pool), (tf.layers.average_pooling1d, ref.avg_pool)])
def test_pooling1d_layers(layer, reference):
    value = _random((2, 7, 3))
    y = layer(tf.constant(value), 3, 2, padding="same")
    got = _run(y)
    want = reference(value[:, None].astype(np.float64), (1, 3), (1, 2), "SAME")[:, 0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layer,reference", [
    (tf.layers.MaxPooling3D, ref3.max_pool3d), (tf.layers.AveragePooling3D, ref3.avg_pool3d)])
def test_pooling3d_layers_channels_first(layer, reference):
    value = _random((2, 4, 5, 3, 2))
    y = layer((2, 2, 1), (2, 1, 1), data_format="channels_first")(
        tf.constant(ref3.ncdhw(value)))
    got = _run(y)
    want = ref3.ncdhw(reference(value.astype(np.float64), (2, 2, 1), (2, 1, 1), "VALID"))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_layer_names_follow_the_class_names():
    x1, x2 = tf.zeros([1, 4, 2]), tf.zeros([1, 4, 4, 2])
    assert tf.layers.Conv1D(1, 1)(x1).name.startswith("conv1d/")
    assert tf.layers.Conv2DTranspose(1, 1)(x2).name.startswith("conv2d_transpose/")
    assert tf.layers.SeparableConv2D(1, 1)(x2).name.startswith("separable_conv2d/")
    assert tf.layers.MaxPooling1D(2, 2)(x1).name.startswith("max_pooling1d/")
    assert tf.layers.conv1d(x1, 1, 1).name.startswith("conv1d_1/")


def test_input_spec_checks_rank_and_channels_naming_the_layer():
    layer = tf.layers.Conv1D(2, 3, name="seq")
    with pytest.raises(ValueError, match=r"layer seq.*expected ndim=3.*found ndim=4"):
        layer(tf.zeros([1, 5, 5, 2]))
    layer(tf.zeros([1, 5, 2]))
    with pytest.raises(ValueError, match=r"layer seq.*axis -1.*value 2.*\(1, 5, 3\)"):
        layer(tf.zeros([1, 5, 3]))
    with pytest.raises(ValueError, match="expected ndim=5"):
        tf.layers.max_pooling3d(tf.zeros([1, 4, 4, 2]), 2, 2)
    spec = tf.layers.InputSpec(dtype=tf.float32, min_ndim=2, axes={-1: 4})
    spec.check(tf.zeros([3, 4]), "d")
    for bad, fragment in ((tf.zeros([4]), "min_ndim=2"), (tf.zeros([2, 3]), "axis -1"),
                          (tf.zeros([2, 4], dtype=tf.float64), "dtype float32")):
        with pytest.raises(ValueError, match=fragment):
            spec.check(bad, "d")
    assert "min_ndim=2" in repr(spec)


def test_transpose_and_separable_layers_train():
    tf.set_random_seed(0)      # the initial weights decide how fast 20 steps go
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((4, 4, 4, 2)).astype(np.float32))
    target = tf.constant(rng.standard_normal((4, 8, 8, 1)).astype(np.float32))
    hidden = tf.layers.separable_conv2d(x, 3, 3, padding="same", activation=tf.nn.relu)
    y = tf.layers.conv2d_transpose(hidden, 1, 2, strides=2)
    loss = tf.reduce_mean(tf.square(y - target))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    assert len(tf.trainable_variables()) == 5
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        before = session.run(loss)
        for _ in range(20):
            session.run(train)
        assert session.run(loss) < 0.9 * before
