"""Clipping and norms (compositions of math ops) against NumPy references, with numeric
gradients: clip_by_value, clip_by_norm, global_norm, clip_by_global_norm, clip_by_average_norm,
tf.norm."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (ALL_FLOATS, FLOATS, INTS, Fixed, Floats, OpCase, check_case_gradient,
                         check_gradient_rows_cover, covered, gradient_params, run_case,
                         value_params)


def _np_clip_by_norm(clip, axes=None):
    def reference(x):
        norm = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        return x * clip / np.maximum(norm, clip)
    return reference


def _np_clip_by_global_norm(clip):
    def reference(*xs):
        norm = np.sqrt(sum(np.sum(x * x) for x in xs))
        return [x * clip / max(norm, clip) for x in xs] + [norm]
    return reference


CLIP_CASES = [
    OpCase("clip_by_value_scalars", {"Maximum", "Minimum"},
           lambda x: tf.clip_by_value(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7),
           (Floats((3, 4), avoid=[-0.5, 0.7], margin=0.05),), ALL_FLOATS, grad=2),
    OpCase("clip_by_value_ints", {"Maximum", "Minimum"}, lambda x: tf.clip_by_value(x, -2, 3),
           lambda x: np.clip(x, -2, 3), (Floats((3, 4), -6, 6),), INTS),
    OpCase("clip_by_value_tensor_bounds", {"Maximum", "Minimum"},
           lambda x, lo, hi: tf.clip_by_value(x, lo, hi), lambda x, lo, hi: np.clip(x, lo, hi),
           (Floats((2, 3)), Fixed([-1.0, -0.2, 0.05]), Fixed([[0.3], [1.1]])), FLOATS, grad=2),
    OpCase("clip_by_norm_all", {"Sqrt", "Maximum"}, lambda x: tf.clip_by_norm(x, 1.5),
           _np_clip_by_norm(1.5), (Floats((2, 3)),), FLOATS, grad=2),
    OpCase("clip_by_norm_rows", {"Sqrt", "Maximum"},
           lambda x: tf.clip_by_norm(x, 1.0, axes=[1]), _np_clip_by_norm(1.0, axes=1),
           (Fixed([[0.1, -0.2, 0.3], [2.0, -1.0, 0.5]]),), FLOATS, grad=2),
    OpCase("clip_by_norm_below_clip_is_unchanged", {"Sqrt"}, lambda x: tf.clip_by_norm(x, 10.0),
           lambda x: x, (Floats((2, 3)),), ALL_FLOATS),
    OpCase("global_norm", {"Sqrt", "AddN"}, lambda x, y: tf.global_norm([x, None, y]),
           lambda x, y: np.sqrt(np.sum(x * x) + np.sum(y * y)), (Floats((2, 3)), Floats((4,))),
           FLOATS, grad=2),
    OpCase("clip_by_global_norm", {"Sqrt", "AddN", "Minimum"},
           lambda x, y: [*tf.clip_by_global_norm([x, y], 1.2)[0],
                         tf.clip_by_global_norm([x, y], 1.2)[1]],
           _np_clip_by_global_norm(1.2), (Floats((2, 3)), Floats((4,))), FLOATS, grad=2),
    OpCase("clip_by_global_norm_use_norm", {"Minimum"},
           lambda x, n: tf.clip_by_global_norm([x], 2.0, use_norm=n)[0][0],
           lambda x, n: x * 2.0 / max(n, 2.0), (Floats((3,)), Fixed(4.0)), FLOATS, grad=2),
    OpCase("clip_by_average_norm", {"Size", "Maximum"},
           lambda x: tf.clip_by_average_norm(x, 0.1),
           lambda x: x * 0.1 / max(np.sqrt(np.sum(x * x)) / x.size, 0.1), (Floats((2, 3)),),
           FLOATS, grad=2),
]

NORM_ROWS = [
    # label, ord, axis, keepdims, NumPy reference
    ("euclidean_all", "euclidean", None, False, lambda x: np.sqrt(np.sum(x * x))),
    ("euclidean_axis", "euclidean", 1, True, lambda x: np.linalg.norm(x, axis=1, keepdims=True)),
    ("one_axis", 1, 0, False, lambda x: np.linalg.norm(x, 1, axis=0)),
    ("inf_axis", np.inf, -1, False, lambda x: np.linalg.norm(x, np.inf, axis=-1)),
    ("three_all", 3, None, False, lambda x: np.sum(np.abs(x) ** 3) ** (1 / 3)),
    ("fro_matrix", "fro", (0, 1), False, lambda x: np.linalg.norm(x, "fro")),
    ("matrix_one", 1, [0, 1], True, lambda x: np.linalg.norm(x, 1, axis=(0, 1),
                                                             keepdims=True)),
    ("matrix_inf", np.inf, (0, 1), False, lambda x: np.linalg.norm(x, np.inf)),
]
NORM_CASES = [
    OpCase(f"norm_{label}", {"Sqrt"} if ord_ in ("euclidean", "fro") else {"Abs"},
           (lambda o, a, k: lambda x: tf.norm(x, ord=o, axis=a, keepdims=k))(ord_, axis, keep),
           reference, (Floats((3, 4), 0.3, 2.0) if ord_ in ("euclidean", "fro", 3) else
                       Fixed([[0.5, -1.5, 2.0, 0.25], [1.0, 0.75, -0.3, -2.5],
                              [-0.6, 1.25, 0.1, 1.75]]),),
           FLOATS, grad=2)
    for label, ord_, axis, keep, reference in NORM_ROWS
]

CASES = CLIP_CASES + NORM_CASES
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


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


def test_sparse_gradients_are_clipped_and_stay_sparse():
    with tf.Graph().as_default():
        params = tf.constant(np.ones((4, 2)))
        dense_part = tf.constant([3.0, 4.0], dtype=tf.float64)
        sparse, = tf.gradients(tf.reduce_sum(tf.gather(params, [1, 3]) * 2.0), params)
        assert isinstance(sparse, tf.IndexedSlices)
        (clipped_sparse, clipped_dense), norm = tf.clip_by_global_norm([sparse, dense_part], 1.0)
        assert isinstance(clipped_sparse, tf.IndexedSlices)
        by_value = tf.clip_by_value(sparse, 0.0, 1.5)
        got_sparse, got_dense, got_norm, got_by_value = _run(
            [clipped_sparse, clipped_dense, norm, by_value])
    expected_norm = np.sqrt(4 * 4.0 + 9.0 + 16.0)
    assert np.isclose(got_norm, expected_norm)
    np.testing.assert_allclose(got_sparse.values, np.full((2, 2), 2.0 / expected_norm))
    np.testing.assert_allclose(got_dense, [3.0 / expected_norm, 4.0 / expected_norm])
    np.testing.assert_allclose(got_by_value.values, np.full((2, 2), 1.5))


def test_clip_by_global_norm_of_an_infinite_norm_is_nan():
    with tf.Graph().as_default():
        clipped, norm = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
        got, got_norm = _run([clipped[0], norm])
    assert np.isinf(got_norm) and np.isnan(got).all()


def test_clip_by_norm_of_zeros_has_finite_gradient():
    with tf.Graph().as_default():
        x = tf.zeros([3], tf.float64)
        grad, = tf.gradients(tf.reduce_sum(tf.clip_by_norm(x, 1.0)), x)
        assert np.isfinite(_run(grad)).all()


# --- bad inputs ---------------------------------------------------------------------------------
def test_clip_bounds_that_would_enlarge_the_tensor_are_rejected():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="clip_value_min of shape"):
            tf.clip_by_value(tf.zeros([3]), tf.zeros([2, 3]), 1.0)
        with pytest.raises(ValueError, match="clip_value_max of shape"):
            tf.clip_by_value(tf.zeros([3]), 0.0, tf.zeros([2]))


def test_norm_rejects_unsupported_orders():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="spectral"):
            tf.norm(tf.zeros([2, 2]), ord=2, axis=[0, 1])
        with pytest.raises(ValueError, match="ord must be"):
            tf.norm(tf.zeros([2]), ord=-1)
        with pytest.raises(TypeError, match="list of tensors"):
            tf.global_norm(tf.zeros([2]))
