"""Floating-point errors are quiet, as in TF: 1/0, log(0), 0/0 and overflow give inf/nan and no
RuntimeWarning, on the inline path and on the parallel executor's lanes alike (the executor sets
NumPy's error state once per step/thread; kernels no longer set it per call)."""
import warnings

import numpy as np
import pytest

import tensorweave as tf


def _graph():
    x = tf.placeholder(tf.float32, [3])
    return x, [x / tf.zeros([3]), tf.log(x - x), tf.exp(x * 1000.0), tf.cast(x * 1e30, tf.float16)]


@pytest.mark.parametrize("devices", [1, 2])
def test_kernels_give_inf_and_nan_without_warnings(devices):
    with tf.Graph().as_default():
        x, outputs = _graph()
        if devices == 2:  # the second output on another device: the step runs on lanes
            with tf.device("/cpu:1"):
                outputs.append(tf.identity(outputs[1]) + 1.0)
        config = tf.ConfigProto(device_count={"CPU": devices})
        with tf.Session(config=config) as sess, warnings.catch_warnings():
            warnings.simplefilter("error")
            values = sess.run(outputs, {x: [1.0, -1.0, 0.0]})
    np.testing.assert_array_equal(values[0], [np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(values[1], [-np.inf] * 3)
    np.testing.assert_array_equal(values[2], [np.inf, 0.0, 1.0])
    np.testing.assert_array_equal(values[3], [np.inf, -np.inf, 0.0])
    if devices == 2:
        np.testing.assert_array_equal(values[4], [-np.inf] * 3)


def test_the_callers_error_state_is_left_as_it_was():
    before = np.geterr()
    with tf.Graph().as_default():
        x, outputs = _graph()
        with tf.Session() as sess:
            sess.run(outputs, {x: [1.0, 2.0, 3.0]})
    assert np.geterr() == before
