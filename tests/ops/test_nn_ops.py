"""Neural-network ops against NumPy: Relu (and ReluGrad), softmax, log-softmax and the three
cross-entropy losses, with first- and second-order numeric gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.op_util import make_tensor

from .op_harness import (ALL_FLOATS, FLOATS, Fixed, Floats, Ints, OpCase, check_case_gradient,
                         check_gradient_rows_cover, check_kernel_precision, covered,
                         gradient_params, precision_params, run_case, value_params)


def _log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _softmax(x, axis=-1):
    return np.exp(_log_softmax(x, axis))


def _distribution(shape):
    """Rows that are probability distributions (labels of the dense cross entropy)."""
    def draw(rng, dtype):
        return _softmax(rng.standard_normal(shape)).astype(dtype)
    return draw


def _xent_inputs(shape):
    def draw(rng, dtype):
        return [rng.uniform(-2, 2, size=shape).astype(dtype), _distribution(shape)(rng, dtype)]
    return draw


FIXED_LABELS = _softmax(np.random.default_rng(7).standard_normal((3, 4)))


def _xent_v1_fixed_labels(logits):
    labels = tf.constant(FIXED_LABELS.astype(logits.dtype.np_dtype))
    return tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)


ACTIVATION_CASES = [
    OpCase("relu", {"Relu"}, tf.nn.relu, lambda x: np.maximum(x, 0),
           (Floats((2, 3), avoid=[0]),), ALL_FLOATS, grad=2),
    OpCase("relu_grad", {"ReluGrad"}, lambda g, f: make_tensor("ReluGrad", [g, f]),
           lambda g, f: np.where(f > 0, g, 0), (Floats((2, 3)), Floats((2, 3), avoid=[0])),
           ALL_FLOATS, grad=2),
    OpCase("relu_composed", {"Relu", "MatMul"}, lambda x, w: tf.nn.relu(tf.matmul(x, w)),
           lambda x, w: np.maximum(x @ w, 0), (Floats((2, 3), 0.2, 1), Floats((3, 2), -1, 1)),
           FLOATS, grad=2, modes=("static",)),
]
SOFTMAX_CASES = [
    OpCase("softmax", {"Softmax"}, tf.nn.softmax, _softmax, (Floats((2, 4), -3, 3),),
           ALL_FLOATS, grad=2),
    OpCase("softmax_rank3", {"Softmax"}, tf.nn.softmax, _softmax, (Floats((2, 2, 3)),),
           FLOATS, grad=2),
    OpCase("softmax_axis0", {"Softmax", "Transpose"}, lambda x: tf.nn.softmax(x, axis=0),
           lambda x: _softmax(x, 0), (Floats((3, 2)),), FLOATS, grad=2, modes=("static",)),
    OpCase("softmax_large_logits", {"Softmax"}, tf.nn.softmax, _softmax,
           (Floats((2, 3), 500, 1000),), FLOATS),
    OpCase("log_softmax", {"LogSoftmax"}, tf.nn.log_softmax, _log_softmax,
           (Floats((2, 4), -3, 3),), ALL_FLOATS, grad=2, rtol=1e-4),
    OpCase("log_softmax_large_logits", {"LogSoftmax"}, tf.nn.log_softmax, _log_softmax,
           (Floats((2, 3), -1000, 1000),), FLOATS, rtol=1e-5),
    OpCase("log_softmax_axis1_of_3", {"LogSoftmax", "Transpose"},
           lambda x: tf.nn.log_softmax(x, axis=1), lambda x: _log_softmax(x, 1),
           (Floats((2, 3, 2)),), FLOATS, grad=2, modes=("static",)),
]
XENT_CASES = [
    OpCase("softmax_xent_v2", {"SoftmaxCrossEntropyWithLogits"},
           lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(
               labels=labels, logits=logits),
           lambda logits, labels: -(labels * _log_softmax(logits)).sum(-1), _xent_inputs((3, 4)),
           ALL_FLOATS, grad=2, rtol=1e-4),
    OpCase("softmax_xent_v2_rank3", {"SoftmaxCrossEntropyWithLogits", "Reshape"},
           lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(
               labels=labels, logits=logits),
           lambda logits, labels: -(labels * _log_softmax(logits)).sum(-1),
           _xent_inputs((2, 2, 3)), FLOATS, grad=2, modes=("static",), static_exact=False),
    OpCase("softmax_xent_v2_single_example", {"SoftmaxCrossEntropyWithLogits"},
           lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(
               labels=labels, logits=logits),
           lambda logits, labels: -(labels * _log_softmax(logits)).sum(-1), _xent_inputs((4,)),
           FLOATS, grad=2, modes=("static",)),
    OpCase("softmax_xent_v2_broadcast_labels", {"SoftmaxCrossEntropyWithLogits"},
           lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(
               labels=labels, logits=logits),
           lambda logits, labels: -(labels * _log_softmax(logits)).sum(-1),
           lambda rng, dtype: [rng.uniform(-2, 2, (3, 4)).astype(dtype),
                               _distribution((1, 4))(rng, dtype)],
           FLOATS, grad=2, modes=("static",)),
    OpCase("softmax_xent_v1", {"SoftmaxCrossEntropyWithLogits", "StopGradient"},
           _xent_v1_fixed_labels, lambda logits: -(FIXED_LABELS * _log_softmax(logits)).sum(-1),
           (Floats((3, 4)),), FLOATS, grad=2),
    # The classes along another axis (labels are distributions along it).
    OpCase("softmax_xent_v2_axis0", {"SoftmaxCrossEntropyWithLogits", "Transpose"},
           lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(
               labels=labels, logits=logits, axis=0),
           lambda logits, labels: -(labels * _log_softmax(logits, 0)).sum(0),
           lambda rng, dtype: [rng.uniform(-2, 2, (3, 4)).astype(dtype),
                               _softmax(rng.standard_normal((3, 4)), 0).astype(dtype)],
           FLOATS, grad=2, modes=("static", "partial")),
    OpCase("softmax_xent_v1_dim1_of_3d", {"SoftmaxCrossEntropyWithLogits", "Transpose"},
           lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits(
               labels=labels, logits=logits, dim=1),
           lambda logits, labels: -(labels * _log_softmax(logits, 1)).sum(1),
           lambda rng, dtype: [rng.uniform(-2, 2, (2, 3, 4)).astype(dtype),
                               _softmax(rng.standard_normal((2, 3, 4)), 1).astype(dtype)],
           FLOATS, modes=("static", "partial")),  # v1: no gradient into labels by design
    OpCase("softmax_xent_large_logits", {"SoftmaxCrossEntropyWithLogits"},
           lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(
               labels=labels, logits=logits * 1000.0),
           lambda logits, labels: -(labels * _log_softmax(logits * 1000.0)).sum(-1),
           _xent_inputs((2, 3)), FLOATS, rtol=1e-5),
    OpCase("sparse_xent_int32", {"SparseSoftmaxCrossEntropyWithLogits"},
           lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
               labels=labels, logits=logits),
           lambda logits, labels: -_log_softmax(logits)[np.arange(len(labels)), labels],
           (Floats((3, 4)), Ints((3,), 0, 4, np.int32)), ALL_FLOATS, grad=2, rtol=1e-4),
    OpCase("sparse_xent_int64", {"SparseSoftmaxCrossEntropyWithLogits"},
           lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
               labels=labels, logits=logits),
           lambda logits, labels: -_log_softmax(logits)[np.arange(len(labels)), labels],
           (Floats((4, 3)), Fixed([2, 0, 0, 1], np.int64)), FLOATS, grad=2),
    # TF 1.x takes logits of any rank >= 1, with labels of their shape minus the classes.
    OpCase("sparse_xent_3d_logits", {"SparseSoftmaxCrossEntropyWithLogits"},
           lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
               labels=labels, logits=logits),
           lambda logits, labels: -np.take_along_axis(_log_softmax(logits), labels[..., None],
                                                      -1)[..., 0],
           (Floats((2, 3, 4)), Ints((2, 3), 0, 4, np.int32)), FLOATS, grad=2,
           modes=("static", "partial")),
    OpCase("sparse_xent_1d_logits", {"SparseSoftmaxCrossEntropyWithLogits"},
           lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
               labels=labels, logits=logits),
           lambda logits, labels: -_log_softmax(logits)[labels],
           (Floats((4,)), Fixed(2, np.int64)), FLOATS, grad=2, modes=("static",)),
    OpCase("l2_loss", {"Square", "Sum", "Mul"}, tf.nn.l2_loss, lambda x: 0.5 * np.sum(x * x),
           (Floats((2, 3)),), FLOATS, grad=2),
]

CASES = ACTIVATION_CASES + SOFTMAX_CASES + XENT_CASES
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,dtype", precision_params(CASES))
def test_kernels_keep_their_input_precision(case, dtype):
    check_kernel_precision(case, dtype)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def test_every_differentiable_op_has_a_gradient_row():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


# --- behaviour beyond one row -------------------------------------------------------------------
def _run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


def _xent_graph(loss_fn):
    logits = tf.constant(np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]]))
    labels = tf.constant(np.array([[0.2, 0.7, 0.1], [1.0, 0.0, 0.0]]))
    loss = tf.reduce_sum(loss_fn(labels=labels, logits=logits))
    return logits, labels, loss


def test_xent_v2_gives_labels_a_gradient_and_v1_does_not():
    with tf.Graph().as_default():
        logits, labels, loss = _xent_graph(tf.nn.softmax_cross_entropy_with_logits_v2)
        grad_logits, grad_labels = tf.gradients(loss, [logits, labels])
        assert grad_labels is not None
        got_logits, got_labels = _run([grad_logits, grad_labels])
    logits_value = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    labels_value = np.array([[0.2, 0.7, 0.1], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(got_logits, _softmax(logits_value) - labels_value)
    np.testing.assert_allclose(got_labels, -_log_softmax(logits_value))
    with tf.Graph().as_default():
        logits, labels, loss = _xent_graph(tf.nn.softmax_cross_entropy_with_logits)
        grad_logits, grad_labels = tf.gradients(loss, [logits, labels])
        assert grad_labels is None
        np.testing.assert_allclose(_run(grad_logits), _softmax(logits_value) - labels_value)


def test_xent_v2_second_order_mixes_logits_and_labels():
    # d/dlabels of sum(dloss/dlogits * v) is -v: the rule must route grad_backprop to labels.
    with tf.Graph().as_default():
        logits, labels, loss = _xent_graph(tf.nn.softmax_cross_entropy_with_logits_v2)
        grad_logits, = tf.gradients(loss, logits)
        direction = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]])
        second, = tf.gradients(tf.reduce_sum(grad_logits * direction), labels)
        np.testing.assert_allclose(_run(second), -direction)


def test_softmax_rows_sum_to_one_and_keep_dtype():
    with tf.Graph().as_default():
        x = tf.constant(np.random.default_rng(0).standard_normal((4, 5)).astype(np.float16))
        value = _run(tf.nn.softmax(x))
    assert value.dtype == np.float16
    np.testing.assert_allclose(value.astype(np.float64).sum(-1), 1.0, atol=2e-3)


def test_relu_gradient_at_zero_is_zero():
    with tf.Graph().as_default():
        x = tf.constant([-1.0, 0.0, 2.0])
        grad, = tf.gradients(tf.nn.relu(x), x)
        np.testing.assert_array_equal(_run(grad), [0.0, 0.0, 1.0])


# --- bad inputs ---------------------------------------------------------------------------------
def test_xent_shape_mismatch_names_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="SoftmaxCrossEntropyWithLogits"):
            tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.zeros([2, 3]),
                                                       logits=tf.zeros([2, 4]))
        with pytest.raises(ValueError, match="SparseSoftmaxCrossEntropyWithLogits"):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([3], tf.int32),
                                                           logits=tf.zeros([2, 4]))
        with pytest.raises(ValueError, match=r"SparseSoftmax.*\(2, 4\).*\(2, 3, 5\)"):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([2, 4], tf.int32),
                                                           logits=tf.zeros([2, 3, 5]))


def test_sparse_label_out_of_range_raises_invalid_argument_naming_the_op():
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.int32, [2])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                              logits=tf.zeros([2, 3]),
                                                              name="my_sparse_xent")
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_sparse_xent"):
            _run(loss, {labels: [0, 3]})


def test_nn_dtype_errors_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Relu"):
            tf.nn.relu(tf.constant([1, 2]))
        with pytest.raises(TypeError, match="Softmax"):
            tf.nn.softmax(tf.constant([[1, 2]]))
        with pytest.raises(TypeError):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([2]),
                                                           logits=tf.zeros([2, 3]))
        with pytest.raises(ValueError, match="Softmax"):
            tf.nn.softmax(tf.constant(1.0))
