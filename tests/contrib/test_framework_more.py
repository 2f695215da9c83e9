"""The rest of tf.contrib.framework: assigning from values and checkpoints through feeds,
variable filters, local variables, name-scope helpers, shape checks, deprecation warnings."""
import logging

import numpy as np
import pytest

import tensorweave as tf

fw = tf.contrib.framework


def test_assign_from_values_and_checkpoint(tmp_path):
    with tf.Graph().as_default():
        with tf.variable_scope("net"):
            w = tf.get_variable("w", [2, 3])
            b = tf.get_variable("b", [3])
        op, feed = fw.assign_from_values({"net/w": np.ones((2, 3)), "net/b": [1.0, 2.0, 3.0]})
        fn = fw.assign_from_values_fn({"net/b": [7.0, 8.0, 9.0]})
        saver = tf.train.Saver()
        with tf.Session() as session:
            session.run(op, feed)
            np.testing.assert_allclose(session.run(w), np.ones((2, 3)))
            fn(session)
            np.testing.assert_allclose(session.run(b), [7.0, 8.0, 9.0])
            path = saver.save(session, str(tmp_path / "model"))
        with pytest.raises(ValueError, match="Shape mismatch for variable net/b"):
            fw.assign_from_values({"net/b": [1.0]})
    with tf.Graph().as_default():
        with tf.variable_scope("net"):
            w2 = tf.get_variable("w", [2, 3], initializer=tf.zeros_initializer())
            extra = tf.get_variable("extra", [1])
        op, feed = fw.assign_from_checkpoint(path, [w2, extra], ignore_missing_vars=True)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(op, feed)
            np.testing.assert_allclose(session.run(w2), np.ones((2, 3)))
        with pytest.raises(ValueError, match="not found in"):
            fw.assign_from_checkpoint(path, [extra])


def test_filters_names_and_local_variables():
    with tf.Graph().as_default():
        with tf.variable_scope("encoder"):
            a = tf.get_variable("kernel", [1])
            tf.get_variable("bias", [1])
        with tf.variable_scope("decoder"):
            c = tf.get_variable("kernel", [1])
        kept = fw.filter_variables(tf.global_variables(), include_patterns=["kernel"],
                                   exclude_patterns=["^decoder"])
        assert kept == [a] and fw.get_variable_full_name(c) == "decoder/kernel"
        counter = fw.local_variable(5, name="counter")
        assert counter in tf.local_variables() and counter not in tf.global_variables()
        with tf.name_scope("outer"):
            assert fw.get_name_scope() == "outer"
        with tf.Session() as session:
            session.run(tf.local_variables_initializer())
            session.run(fw.zero_initializer(counter))
            assert session.run(counter) == 0
            assert session.run(fw.reduce_sum_n([tf.ones([2]), tf.ones([3])])) == 5.0
    assert fw.prepend_name_scope("^a/b", "s") == "^s/a/b"
    assert fw.strip_name_scope("s/a/b", "s") == "a/b"


def test_shape_checks_and_deprecation(caplog):
    x = tf.placeholder(tf.float32, [None, 3])
    assert fw.with_shape([4, 3], x).shape.as_list() == [4, 3]
    with pytest.raises(ValueError, match="not compatible"):
        fw.with_shape([4, 2], tf.placeholder(tf.float32, [None, 3]))
    assert fw.assert_same_float_dtype([x], tf.float32) == tf.float32
    with pytest.raises(ValueError, match="Expected"):
        fw.assert_same_float_dtype([x, tf.constant(1.0, tf.float64)])

    @fw.deprecated("2017-01-01", "Use new_fn instead.")
    def old_fn(value):
        return value + 1

    with caplog.at_level(logging.WARNING, logger="tensorweave.deprecation"):
        assert old_fn(1) == 2 and old_fn(2) == 3
    messages = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert len(messages) == 1 and "after 2017-01-01" in messages[0]
