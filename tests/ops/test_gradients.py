"""The backward walk (tf.gradients) itself: which tensors get gradients, grad_ys, sums over
several ys and paths, stop_gradients, integer paths, variables, IndexedSlices aggregation and
the errors it raises. The per-op rules are checked numerically in the op modules."""
import numpy as np
import pytest

import tensorweave as tf

# This module tests the walk; the ops it builds are covered by the op modules.
COVERED_OP_TYPES = set()


def _run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


def test_unconnected_and_integer_paths_give_none():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        other = tf.constant(3.0)
        assert tf.gradients(x * 2.0, [x, other])[1] is None
        through_int = tf.cast(tf.cast(x, tf.int32), tf.float32)
        assert tf.gradients(through_int, x) == [None]


def test_gradient_of_a_tensor_with_respect_to_itself_is_ones():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0], dtype=tf.float64)
        grad, = tf.gradients(x, x)
        np.testing.assert_array_equal(_run(grad), [1.0, 1.0])


def test_grad_ys_weight_each_y_and_several_ys_sum():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        z = x * tf.constant([3.0, 4.0])
        weighted, = tf.gradients(z, x, grad_ys=[np.array([10.0, 20.0], np.float32)])
        summed, = tf.gradients([z, z * 2.0], x)
        np.testing.assert_array_equal(_run(weighted), [30.0, 80.0])
        np.testing.assert_array_equal(_run(summed), [9.0, 12.0])
        with pytest.raises(ValueError, match="grad_ys"):
            tf.gradients(z, x, grad_ys=[1.0, 2.0])


def test_paths_through_a_shared_intermediate_add_up():
    with tf.Graph().as_default():
        x = tf.constant(2.0, dtype=tf.float64)
        a = x * x
        y = a * x + a  # x^3 + x^2
        grad_x, grad_a = tf.gradients(y, [x, a])
        assert _run([grad_x, grad_a]) == [3 * 4.0 + 2 * 2.0, 2.0 + 1.0]


def test_stop_gradients_tensors_receive_gradients_but_pass_none_on():
    # TF's documented example: d(a + b)/d[a, b] with both stopped is [1, 1].
    with tf.Graph().as_default():
        a = tf.constant(0.0)
        b = 2.0 * a
        grads = tf.gradients(a + b, [a, b], stop_gradients=[a, b])
        assert _run(grads) == [1.0, 1.0]
        x = tf.constant([1.0, 2.0])
        scaled = x * 2.0
        assert tf.gradients(scaled * 3.0, x, stop_gradients=[scaled]) == [None]
        grad_x, grad_scaled = tf.gradients([scaled, scaled * 3.0], [x, scaled],
                                           stop_gradients=[scaled])
        assert grad_x is None
        np.testing.assert_array_equal(_run(grad_scaled), [4.0, 4.0])


def test_stop_gradient_op_blocks_one_path_only():
    with tf.Graph().as_default():
        x = tf.constant(3.0)
        grad, = tf.gradients(x * tf.stop_gradient(x) + x, x)
        assert _run(grad) == 4.0


def test_gradient_with_respect_to_a_variable():
    with tf.Graph().as_default():
        var = tf.Variable([1.0, 2.0])
        grad, = tf.gradients(tf.reduce_sum(var * var), var)
        with tf.Session() as session:
            session.run(var.initializer)
            np.testing.assert_array_equal(session.run(grad), [2.0, 4.0])


def test_sparse_gradients_aggregate_sparsely_and_mix_with_dense():
    with tf.Graph().as_default():
        params = tf.constant(np.ones((3, 2)))
        sparse, = tf.gradients(tf.reduce_sum(tf.gather(params, [0])) +
                               tf.reduce_sum(tf.gather(params, [0, 2])), params)
        assert isinstance(sparse, tf.IndexedSlices)
        mixed, = tf.gradients(tf.reduce_sum(tf.gather(params, [1])) + tf.reduce_sum(params),
                              params)
        assert isinstance(mixed, tf.Tensor)
        np.testing.assert_array_equal(_run(tf.convert_to_tensor(sparse)),
                                      [[2, 2], [0, 0], [1, 1]])
        np.testing.assert_array_equal(_run(mixed), [[1, 1], [2, 2], [1, 1]])


def test_gradients_are_graphs_placed_under_the_gradients_scope():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        grad, = tf.gradients(tf.sin(x), x, name="my_grads")
        assert grad.name.startswith("my_grads/")


def test_hessians_of_a_cubic():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        cubic = tf.reduce_sum(x * x * x) + tf.reduce_prod(x)
        hessian, = tf.hessians(cubic, x)
        assert hessian.shape.as_list() == [2, 2]
        np.testing.assert_allclose(_run(hessian, {x: [1.0, 2.0]}), [[6.0, 1.0], [1.0, 12.0]])


def test_integer_ys_are_rejected():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="floating-point"):
            tf.gradients(tf.constant([1, 2]), tf.constant([1.0]))


def test_an_op_without_a_gradient_decision_raises_lookup_error_naming_it():
    from tensorweave.ops import gradients as gradients_lib
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        y = tf.sin(x, name="undecided")
        saved = gradients_lib._GRADIENTS.pop("Sin")
        try:
            with pytest.raises(LookupError, match="undecided"):
                tf.gradients(y, x)
        finally:
            gradients_lib._GRADIENTS["Sin"] = saved
