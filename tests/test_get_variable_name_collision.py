"""tf.get_variable('w') after a tf.Variable(name='w') (CS20's variables lecture does this): the
variable store has no 'w', so TF makes a new variable whose ops are uniquified to 'w_1'; reuse
finds it under the store name 'w'. Both variables hold their own values."""
import numpy as np
import pytest

import tensorweave as tf


def test_get_variable_after_a_same_named_tf_variable():
    with tf.Graph().as_default():
        plain = tf.Variable(2, name="scalar")
        stored = tf.get_variable("scalar", initializer=tf.constant(5))
        assert (plain.name, stored.name) == ("scalar:0", "scalar_1:0")
        with tf.variable_scope(tf.get_variable_scope(), reuse=True):
            assert tf.get_variable("scalar", dtype=tf.int32) is stored
        doubled = stored.assign(stored * 2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(doubled)
            assert sess.run([plain, stored]) == [2, 10]


def test_scoped_names_are_unchanged_without_a_collision():
    with tf.Graph().as_default():
        with tf.variable_scope("layer"):
            weights = tf.get_variable("w", [2, 3], initializer=tf.ones_initializer())
        assert weights.name == "layer/w:0"
        assert weights.initializer.name == "layer/w/Assign"
        with tf.Session() as sess:
            sess.run(weights.initializer)
            np.testing.assert_array_equal(sess.run(weights), np.ones((2, 3), np.float32))


def test_a_second_get_variable_of_the_same_name_still_fails():
    with tf.Graph().as_default():
        tf.get_variable("v", [1])
        with pytest.raises(ValueError, match="already exists"):
            tf.get_variable("v", [1])
