"""A NumPy array on the left of an operator with a tensor or a variable on the right
(`np_targets - prediction`, as TF 1.x programs write) builds a graph op, as TF's
__array_priority__ makes it, and the op computes what NumPy computes."""
import operator

import numpy as np
import pytest

import tensorweave as tf

OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
             operator.lt, operator.ge]


@pytest.mark.parametrize("as_variable", [False, True])
@pytest.mark.parametrize("binary", OPERATORS, ids=lambda f: f.__name__)
def test_ndarray_on_the_left_builds_an_op(binary, as_variable):
    left = np.array([[3.0, 4.5], [0.5, 2.0]])  # float64, as np.linspace/np.random give
    right_value = np.array([1.5, 2.0], dtype=np.float32)
    with tf.Graph().as_default():
        right = tf.Variable(right_value) if as_variable else tf.constant(right_value)
        result = binary(left, right)
        assert isinstance(result, tf.Tensor)
        assert result.shape.as_list() == [2, 2]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(result)
    np.testing.assert_allclose(got, binary(left.astype(np.float32), right_value), rtol=1e-6)


def test_mean_squared_error_of_numpy_targets_trains():
    """The pattern of Morvan's gradient-descent tutorial: mse = mean(square(y - pred)) with y a
    float64 array; the gradient reaches the variable."""
    x = np.linspace(-1, 1, 50, dtype=np.float32)
    y = 1.5 * x + 0.25
    with tf.Graph().as_default():
        a = tf.Variable(0.0)
        mse = tf.reduce_mean(tf.square(y - a * x))
        grad = tf.gradients(mse, a)[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(grad)
    np.testing.assert_allclose(got, np.mean(-2 * (y - 0) * x), rtol=1e-5)
