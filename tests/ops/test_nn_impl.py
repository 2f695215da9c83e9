"""The composite nn functions (ops/nn_impl.py) against NumPy, with numeric gradients; dropout's
statistics and seeding; argument errors at build time."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (ALL_FLOATS, FLOATS, Fixed, Floats, Ints, OpCase, check_case_gradient,
                         covered, gradient_params, run_case, value_params)


# --- moments, batch normalisation ---------------------------------------------------------------
def _moments_case(label, shape, axes, keep):
    return OpCase(f"moments_{label}", {"Mean", "SquaredDifference"},
                  lambda x: list(tf.nn.moments(x, axes, keep_dims=keep)),
                  lambda x: [np.mean(x, axis=tuple(axes), keepdims=keep),
                             np.var(x, axis=tuple(axes), keepdims=keep)],
                  (Floats(shape),), FLOATS, grad=2)


MOMENTS_CASES = [
    _moments_case("batch", (5, 3), [0], False),
    _moments_case("nhwc_keep", (2, 3, 3, 2), [0, 1, 2], True),
    _moments_case("all", (2, 3), [0, 1], False),
    OpCase("moments_float16_in_float32", {"Mean", "Cast"},
           lambda x: list(tf.nn.moments(x, [0])),
           lambda x: [np.mean(x, axis=0), np.var(x, axis=0)], (Floats((6, 2)),),
           (np.float16,), rtol=5e-3, atol=5e-3),
]


def _np_batch_norm(x, mean, var, offset, scale, eps):
    return (x - mean) / np.sqrt(var + eps) * scale + offset


BATCH_NORM_CASES = [
    OpCase("batch_normalization", {"Rsqrt", "Mul", "Add"},
           lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3),
           lambda x, m, v, o, s: _np_batch_norm(x, m, v, o, s, 1e-3),
           (Floats((4, 3)), Floats((3,)), Floats((3,), 0.5, 2), Floats((3,)), Floats((3,))),
           ALL_FLOATS, grad=2, rtol=None),
    OpCase("batch_normalization_no_offset_scale", {"Rsqrt"},
           lambda x, m, v: tf.nn.batch_normalization(x, m, v, None, None, 1e-3),
           lambda x, m, v: _np_batch_norm(x, m, v, 0, 1, 1e-3),
           (Floats((4, 3)), Floats((3,)), Floats((3,), 0.5, 2)), FLOATS, grad=2),
]
BATCH_NORM_CASES[0].dtypes = FLOATS  # float16 rounding of rsqrt is checked by the next row
BATCH_NORM_CASES.append(
    OpCase("batch_normalization_float16", {"Rsqrt"},
           lambda x, m, v: tf.nn.batch_normalization(x, m, v, None, None, 1e-3),
           lambda x, m, v: _np_batch_norm(x, m, v, 0, 1, 1e-3),
           (Floats((4, 3)), Floats((3,)), Floats((3,), 0.5, 2)), (np.float16,), rtol=5e-3,
           atol=5e-3))


def _fused_reference(data_format, training):
    def reference(x, scale, offset, *stats):
        nhwc = np.transpose(x, (0, 2, 3, 1)) if data_format == "NCHW" else x
        if training:
            mean, var = nhwc.mean(axis=(0, 1, 2)), nhwc.var(axis=(0, 1, 2))
            count = nhwc.size // nhwc.shape[-1]
            reported = var * count / (count - 1)
        else:
            mean, var = stats
            reported = var
        y = _np_batch_norm(nhwc, mean, var, offset, scale, 1e-3)
        y = np.transpose(y, (0, 3, 1, 2)) if data_format == "NCHW" else y
        return [y, mean, reported]
    return reference


def _fused_case(data_format, training):
    x_shape = (2, 3, 3, 2) if data_format == "NHWC" else (2, 2, 3, 3)
    inputs = [Floats(x_shape), Floats((2,), 0.5, 2), Floats((2,))]
    if not training:
        inputs += [Floats((2,)), Floats((2,), 0.5, 2)]

    def build(x, scale, offset, *stats):
        mean, var = stats if stats else (None, None)
        return list(tf.nn.fused_batch_norm(x, scale, offset, mean, var, epsilon=1e-3,
                                           data_format=data_format, is_training=training))

    mode = "training" if training else "inference"
    return OpCase(f"fused_batch_norm_{data_format.lower()}_{mode}", {"Rsqrt"}, build,
                  _fused_reference(data_format, training), tuple(inputs), FLOATS, grad=2)


FUSED_CASES = [_fused_case(fmt, training) for fmt in ("NHWC", "NCHW")
               for training in (True, False)]


# --- l2_normalize, softsign, xw_plus_b ----------------------------------------------------------
def _np_l2_normalize(axis):
    def reference(x):
        return x / np.sqrt(np.maximum(np.sum(x * x, axis=axis, keepdims=True), 1e-12))
    return reference


L2_CASES = [
    OpCase(f"l2_normalize_{label}", {"Rsqrt", "Maximum", "Sum"},
           (lambda axis: lambda x: tf.nn.l2_normalize(x, axis))(axis), _np_l2_normalize(axis),
           (Floats((3, 4)),), FLOATS, grad=2)
    for label, axis in [("all", None), ("rows", 1), ("columns", 0), ("both", (0, 1))]
] + [
    OpCase("l2_normalize_dim_alias_zero_row", {"Rsqrt"}, lambda x: tf.nn.l2_normalize(x, dim=1),
           _np_l2_normalize(1), (Fixed([[0.0, 0.0], [3.0, 4.0]]),), FLOATS),
]

SMALL_CASES = [
    OpCase("softsign", {"Abs", "RealDiv"}, tf.nn.softsign, lambda x: x / (1 + np.abs(x)),
           (Floats((3, 4), avoid=[0]),), ALL_FLOATS, grad=2),
    OpCase("xw_plus_b", {"BiasAdd"}, tf.nn.xw_plus_b, lambda x, w, b: x @ w + b,
           (Floats((3, 4)), Floats((4, 2)), Floats((2,))), FLOATS, grad=2),
]


# --- sigmoid cross entropies --------------------------------------------------------------------
def _np_sigmoid_xent(labels, logits):
    return np.logaddexp(0, logits) - labels * logits


def _np_weighted_xent(pos_weight):
    def reference(labels, logits):
        log_sigmoid = -np.logaddexp(0, -logits)
        log_one_minus = -np.logaddexp(0, logits)
        return -(pos_weight * labels * log_sigmoid + (1 - labels) * log_one_minus)
    return reference


XENT_CASES = [
    OpCase("sigmoid_cross_entropy_with_logits", {"SelectV2", "Log1p", "Exp"},
           lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
           _np_sigmoid_xent, (Floats((3, 4), 0, 1), Floats((3, 4), -4, 4, avoid=[0])),
           ALL_FLOATS, grad=2),
    OpCase("sigmoid_cross_entropy_saturated", {"Log1p"},
           lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
           _np_sigmoid_xent, (Floats((8,), 0, 1), Floats((8,), -90, 90)), FLOATS),
    # At x = 0 exactly the gradient is sigmoid(0) - z = 0.5 - z (both branches pick by x >= 0).
    OpCase("sigmoid_cross_entropy_at_zero", {"SelectV2"},
           lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
           _np_sigmoid_xent, (Floats((4,), 0, 1), Fixed([0.0, 0.0, 1.0, -1.0])), FLOATS,
           grad=1),
    OpCase("weighted_cross_entropy_with_logits", {"Log1p", "Abs"},
           lambda z, x: tf.nn.weighted_cross_entropy_with_logits(z, x, 3.0),
           _np_weighted_xent(3.0), (Floats((3, 4), 0, 1), Floats((3, 4), -4, 4, avoid=[0])),
           FLOATS, grad=2),
]


# --- in_top_k, embedding_lookup -----------------------------------------------------------------
def _np_in_top_k(k):
    def reference(predictions, targets):
        out = []
        for row, target in zip(predictions, targets):
            if not 0 <= target < len(row) or not np.all(np.isfinite(row)):
                out.append(False)
                continue
            out.append(int(np.sum(row > row[target])) < k)
        return np.array(out)
    return reference


IN_TOP_K_CASES = [
    OpCase(f"in_top_k_{k}_{label}", {"Greater", "Less"},
           (lambda k: lambda p, t: tf.nn.in_top_k(p, t, k))(k), _np_in_top_k(k),
           (predictions, Ints((6,), 0, 4, dtype)), FLOATS, out_dtype=np.bool_)
    for k in (1, 2)
    for label, predictions, dtype in [("distinct", Floats((6, 4)), np.int32),
                                      ("ties_int64", Floats((6, 4), -2, 2, dtype=None),
                                       np.int64)]
] + [
    OpCase("in_top_k_ties_straddle_the_boundary", {"Greater"},
           lambda p, t: tf.nn.in_top_k(p, t, 1), _np_in_top_k(1),
           (Fixed([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [0.0, 1.0, 5.0]]),
            Fixed([2, 0, 1], np.int32)), FLOATS, out_dtype=np.bool_),
    OpCase("in_top_k_nonfinite_and_out_of_range", {"Greater"},
           lambda p, t: tf.nn.in_top_k(p, t, 2), _np_in_top_k(2),
           (Fixed([[np.nan, 1.0, 2.0], [np.inf, 1.0, 2.0], [0.0, 1.0, 2.0],
                   [0.0, 1.0, 2.0]]), Fixed([2, 2, 3, -1], np.int32)), FLOATS,
           out_dtype=np.bool_),
]

EMBEDDING_CASES = [
    OpCase("embedding_lookup", {"GatherV2"}, lambda p, i: tf.nn.embedding_lookup(p, i),
           lambda p, i: p[i], (Floats((5, 3)), Ints((2, 3), 0, 5)), ALL_FLOATS, grad=2),
    OpCase("embedding_lookup_list_of_one", {"GatherV2"},
           lambda p, i: tf.nn.embedding_lookup([p], i), lambda p, i: p[i],
           (Floats((4, 2)), Ints((3,), 0, 4, np.int64)), FLOATS, grad=1),
    OpCase("embedding_lookup_max_norm", {"GatherV2", "Sqrt"},
           lambda p, i: tf.nn.embedding_lookup(p, i, max_norm=1.0),
           lambda p, i: p[i] * np.minimum(1, 1 / np.linalg.norm(p[i], axis=-1, keepdims=True)),
           (Floats((4, 3)), Ints((5,), 0, 4)), FLOATS, grad=1, modes=("static", "partial"),
           grad_dynamic=False),
]

CASES = (MOMENTS_CASES + BATCH_NORM_CASES + FUSED_CASES + L2_CASES + SMALL_CASES + XENT_CASES +
         IN_TOP_K_CASES + EMBEDDING_CASES)
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


# --- dropout ------------------------------------------------------------------------------------
def _run(fetches, feeds=None):
    with tf.Session() as session:
        return session.run(fetches, feeds)


@pytest.mark.parametrize("kwargs", [{"keep_prob": 0.75}, {"rate": 0.25}])
def test_dropout_keeps_about_keep_prob_and_scales_kept_values(kwargs):
    with tf.Graph().as_default():
        x = tf.ones([200, 100])
        y = tf.nn.dropout(x, seed=1, **kwargs)
        (grad,) = tf.gradients(tf.reduce_sum(y), [x])
        value, grad_value = _run([y, grad])
    assert value.dtype == np.float32
    assert set(np.unique(value)) <= {0.0, np.float32(1 / 0.75)}
    kept = np.mean(value > 0)
    assert abs(kept - 0.75) < 0.02, kept
    np.testing.assert_array_equal(grad_value, value)  # d(x * mask / keep)/dx = mask / keep


def test_dropout_is_seeded_and_fresh_per_run():
    def masks():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            y = tf.nn.dropout(tf.ones([50]), keep_prob=0.5, seed=3)
            with tf.Session() as session:
                return session.run(y), session.run(y)
    first, second = masks()
    again, _ = masks()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, second)


def test_dropout_keep_prob_tensor_and_noise_shape():
    with tf.Graph().as_default():
        keep = tf.placeholder(tf.float32, [])
        y = tf.nn.dropout(tf.ones([4, 30]), keep_prob=keep, noise_shape=[1, 30], seed=2)
        with tf.Session() as session:
            half = session.run(y, {keep: 0.5})
            full = session.run(y, {keep: 1.0})
    assert (half == half[0]).all()  # one draw broadcast over the rows
    np.testing.assert_array_equal(full, np.ones([4, 30]))


def test_dropout_identity_cases_and_errors():
    with tf.Graph().as_default():
        x = tf.ones([3])
        assert tf.nn.dropout(x, keep_prob=1.0).op.type == "Identity"
        assert tf.nn.dropout(x, rate=0.0).op.type == "Identity"
        with pytest.raises(ValueError, match="keep_prob must be in"):
            tf.nn.dropout(x, keep_prob=0.0)
        with pytest.raises(ValueError, match="rate must be in"):
            tf.nn.dropout(x, rate=1.0)
        with pytest.raises(ValueError, match="exactly one of keep_prob and rate"):
            tf.nn.dropout(x)
        with pytest.raises(ValueError, match="floating point"):
            tf.nn.dropout(tf.ones([3], tf.int32), keep_prob=0.5)


# --- other argument errors ----------------------------------------------------------------------
def test_argument_errors_name_the_function_and_value():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"same shape.*\(3,\).*\(4,\)"):
            tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros([4]), logits=tf.zeros([3]))
        with pytest.raises(ValueError, match="named arguments"):
            tf.nn.sigmoid_cross_entropy_with_logits(tf.zeros([3]))
        with pytest.raises(ValueError, match="predictions must be 2-D"):
            tf.nn.in_top_k(tf.zeros([3]), tf.zeros([3], tf.int32), 1)
        with pytest.raises(TypeError, match="targets must be int32 or int64"):
            tf.nn.in_top_k(tf.zeros([3, 2]), tf.zeros([3]), 1)
        with pytest.raises(ValueError, match=r"in_top_k.*\(2, 3\).*\(4,\).*batch size"):
            tf.nn.in_top_k(tf.zeros([2, 3]), tf.zeros([4], tf.int32), 1)
        with pytest.raises(ValueError, match=r"fused_batch_norm: scale .*\(1, 2, 2, 3\).*\(4,\)"):
            tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), tf.ones([4]), tf.zeros([3]))
        with pytest.raises(ValueError, match=r"fused_batch_norm: variance .*NCHW.*\(3,\)"):
            tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), tf.ones([2]), tf.zeros([2]),
                                   tf.zeros([2]), tf.ones([3]), data_format="NCHW",
                                   is_training=False)
        with pytest.raises(ValueError, match="empty list"):  # shards: tests/train
            tf.nn.embedding_lookup([], [0])
        with pytest.raises(ValueError, match="4-D"):
            tf.nn.fused_batch_norm(tf.zeros([2, 3]), tf.ones([3]), tf.zeros([3]))
        with pytest.raises(ValueError, match="needs mean and variance"):
            tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), tf.ones([3]), tf.zeros([3]),
                                   is_training=False)


def test_embedding_lookup_gradient_is_indexed_slices_of_the_looked_up_rows():
    with tf.Graph().as_default():
        table = tf.Variable(np.arange(12, dtype=np.float32).reshape(6, 2))
        rows = tf.nn.embedding_lookup(table, tf.constant([4, 1, 4]))
        (grad,) = tf.gradients(tf.reduce_sum(rows * 2.0), [table])
        assert isinstance(grad, tf.IndexedSlices)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            values, indices = session.run([grad.values, grad.indices])
    np.testing.assert_array_equal(indices, [4, 1, 4])
    np.testing.assert_array_equal(values, np.full((3, 2), 2.0))
