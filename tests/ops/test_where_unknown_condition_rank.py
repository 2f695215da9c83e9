"""tf.where(cond, x, y) with a condition of unknown rank (`tf.placeholder(tf.bool)` fed a
scalar, or a row mask): TF 1.x's Select gives the branches' static shape, and the values are
NumPy's choice."""
import numpy as np

import tensorweave as tf


def test_unshaped_condition_keeps_the_branches_shape():
    flag = tf.placeholder(tf.bool)
    x = tf.placeholder(tf.float32, [None, 3])
    chosen = tf.where(flag, x, -x)
    assert chosen.shape.as_list() == [None, 3]
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(chosen, {flag: True, x: data}), data)
        np.testing.assert_array_equal(sess.run(chosen, {flag: False, x: data}), -data)
        rows = sess.run(chosen, {flag: [True, False], x: data})
    np.testing.assert_array_equal(rows, np.where(np.array([[True], [False]]), data, -data))
