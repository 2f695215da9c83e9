"""Feeds of another dtype convert as TF 1.x's session does (`np.asarray(value, dtype)`):
floats truncate into integer placeholders, numbers become bools, numeric strings parse, integer
arrays wrap; a Python int the tensor's type would change, a non-numeric string, or a number fed
to a string tensor is refused with an error naming the tensor."""
import numpy as np
import pytest

import tensorweave as tf


def _fed(dtype, value):
    p = tf.placeholder(dtype, name="p")
    with tf.Session() as sess:
        return sess.run(tf.identity(p), {p: value})


@pytest.mark.parametrize("dtype, value", [
    (tf.int32, np.array([1.7, -2.5, 3.0])),
    (tf.int32, [1.9, 2]),
    (tf.bool, np.array([0.5, 0.0, -1.0])),
    (tf.int8, np.array([300, -129])),
    (tf.uint8, np.array([-1.0, 7.9])),
    (tf.float32, ["1.5", "2"]),
    (tf.int64, np.array([True, False])),
    (tf.float64, np.float32(0.1)),
])
def test_feed_is_cast_like_numpy_asarray(dtype, value):
    got = _fed(dtype, value)
    expected = np.asarray(np.asarray(value), dtype=dtype.as_numpy_dtype)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_float_labels_feed_an_int32_label_placeholder():
    labels = tf.placeholder(tf.int32, [None])
    logits = tf.constant([[2.0, 0.0], [0.0, 3.0]])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with tf.Session() as sess:
        got = sess.run(loss, {labels: np.array([0.0, 1.0])})  # float64, as np.ones gives
    np.testing.assert_allclose(got, np.log1p(np.exp([-2.0, -3.0])), rtol=1e-6)


def test_python_int_that_the_type_changes_is_refused():
    with pytest.raises(TypeError, match=r"300.*p:0.*int8"):
        _fed(tf.int8, 300)
    with pytest.raises(TypeError, match="uint16"):
        _fed(tf.uint16, -1)
    assert _fed(tf.int8, 127) == 127
    assert _fed(tf.float32, 2 ** 24 + 1) == 2.0 ** 24  # rounds, as TF's check lets it


def test_unconvertible_feeds_name_the_tensor():
    with pytest.raises(ValueError, match=r"p:0.*float32.*abc"):
        _fed(tf.float32, "abc")
    with pytest.raises(TypeError, match=r"int64 for Tensor p_?\d*:0, which has dtype string"):
        _fed(tf.string, np.array([1, 2]))
