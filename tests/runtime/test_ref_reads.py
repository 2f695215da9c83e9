"""Ref edges read the variable when the consumer runs (TF 1.x ref semantics), and fetched
arrays belong to the caller."""
import numpy as np
import pytest

import tensorweave as tf


def test_read_value_after_assign_sees_the_assigned_value_even_when_uninitialized():
    v = tf.Variable(1.0)
    assign = tf.assign(v, 5.0)
    with tf.control_dependencies([assign]):
        read = v.read_value()
    with tf.Session() as sess:
        assert sess.run(read) == 5.0


def test_read_after_assign_add_in_one_step_sees_the_update():
    v = tf.Variable([1.0, 2.0])
    bump = tf.assign_add(v, [10.0, 10.0])
    with tf.control_dependencies([bump]):
        read = v.read_value() * 2.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(read), [22.0, 24.0])
        np.testing.assert_array_equal(sess.run(read), [42.0, 44.0])


def test_assign_of_another_shape_is_seen_by_a_later_read():
    v = tf.Variable([1.0, 2.0], validate_shape=False)
    grow = tf.assign(v, [1.0, 2.0, 3.0], validate_shape=False)
    with tf.control_dependencies([grow]):
        read = v.read_value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(read), [1.0, 2.0, 3.0])


def test_reading_an_uninitialized_variable_names_it():
    v = tf.Variable(1.0, name="lonely")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value lonely"):
            sess.run(v)
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value lonely"):
            sess.run(v.op.outputs[0])
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value lonely"):
            sess.run(v * 2.0)


def test_a_ref_crossing_devices_is_read_when_sent():
    with tf.device("/cpu:0"):
        v = tf.Variable([1.0, 2.0], name="far")
        assign = tf.assign(v, [3.0, 4.0])
    with tf.device("/cpu:1"):
        doubled = v.op.outputs[0] * 2.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value far"):
            sess.run(doubled)  # the Send reads the variable: no None crosses the devices
        sess.run(assign)
        np.testing.assert_array_equal(sess.run(doubled), [6.0, 8.0])


def test_fetched_constants_are_writeable_copies():
    c = tf.constant([1.0, 2.0])
    with tf.Session() as sess:
        first = sess.run(c)
        first[0] = 100.0
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])
