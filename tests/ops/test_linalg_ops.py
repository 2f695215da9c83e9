"""Linear algebra ops (determinants, inverses, solves, Cholesky, QR, SVD, eigh, band and diagonal
parts, cross products) and the compositions built on them, against NumPy, with numeric
gradients. Decompositions whose factors are unique only up to sign (eigenvectors, singular
vectors) are checked through sign-normalised factors or sign-free products."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (FLOATS, REALS, Floats, OpCase, check_case_gradient,
                         check_gradient_rows_cover, check_kernel_precision, covered,
                         gradient_params, precision_params, run_case, value_params)


class WellConditioned:
    """Random matrices of `shape` plus n * I: far from singular."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __call__(self, rng, dtype):
        x = rng.uniform(-1, 1, self.shape)
        return (x + self.shape[-1] * np.eye(self.shape[-1])).astype(dtype)


class PositiveDefinite(WellConditioned):
    """Symmetric positive definite matrices with well separated eigenvalues."""

    def __call__(self, rng, dtype):
        x = rng.uniform(-1, 1, self.shape)
        n = self.shape[-1]
        spread = np.diag(np.arange(1, n + 1, dtype=np.float64) * 1.5)
        return (x @ np.swapaxes(x, -1, -2) + n * np.eye(n) + spread).astype(dtype)


class Lower(WellConditioned):
    def __call__(self, rng, dtype):
        return np.tril(super().__call__(rng, dtype))


def _np_lower_symmetric(x):
    lower = np.tril(x)
    return lower + np.swapaxes(np.tril(x, -1), -1, -2)


def _sign_fixed(vectors, reference):
    """Columns flipped so that `reference`'s first row is non-negative."""
    return vectors * np.where(reference[..., :1, :] < 0, -1.0, 1.0)


def _tf_sign_fixed(vectors, reference):
    return vectors * tf.sign(reference[..., :1, :] + 0.0)


def _np_eigh(x):
    e, v = np.linalg.eigh(_np_lower_symmetric(x))
    return [e, _sign_fixed(v, v)]


def _tf_eigh(x):
    e, v = tf.linalg.eigh(x)
    return [e, _tf_sign_fixed(v, v)]


def _np_svd(x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    v = np.swapaxes(vh, -1, -2)
    return [s, _sign_fixed(u, u), _sign_fixed(v, u)]


def _tf_svd(x):
    s, u, v = tf.svd(x)
    return [s, _tf_sign_fixed(u, u), _tf_sign_fixed(v, u)]


DECOMPOSITION_CASES = [
    OpCase("det", {"MatrixDeterminant"}, tf.matrix_determinant, np.linalg.det,
           (WellConditioned((2, 3, 3)),), FLOATS, grad=2, rtol=1e-4),
    OpCase("slogdet", {"LogMatrixDeterminant"}, lambda x: list(tf.linalg.slogdet(x)),
           lambda x: list(np.linalg.slogdet(x)), (WellConditioned((2, 4, 4)),), FLOATS, grad=2),
    OpCase("inverse", {"MatrixInverse"}, tf.matrix_inverse, np.linalg.inv,
           (WellConditioned((2, 3, 3)),), FLOATS, grad=2, rtol=1e-4),
    OpCase("inverse_adjoint", {"MatrixInverse"}, lambda x: tf.linalg.inv(x, adjoint=True),
           lambda x: np.linalg.inv(np.swapaxes(x, -1, -2)), (WellConditioned((3, 3)),),
           FLOATS, grad=1, rtol=1e-4),
    OpCase("solve", {"MatrixSolve"}, tf.matrix_solve, np.linalg.solve,
           (WellConditioned((2, 3, 3)), Floats((2, 3, 2))), FLOATS, grad=2, rtol=1e-4),
    OpCase("solve_adjoint", {"MatrixSolve"}, lambda a, b: tf.linalg.solve(a, b, adjoint=True),
           lambda a, b: np.linalg.solve(np.swapaxes(a, -1, -2), b),
           (WellConditioned((3, 3)), Floats((3, 4))), FLOATS, grad=1, rtol=1e-4),
    *[OpCase(f"triangular_solve_{'lower' if lower else 'upper'}_adj{int(adj)}",
             {"MatrixTriangularSolve"},
             (lambda lo, ad: lambda a, b: tf.matrix_triangular_solve(a, b, lower=lo,
                                                                     adjoint=ad))(lower, adj),
             (lambda lo, ad: lambda a, b: np.linalg.solve(
                 np.swapaxes(np.tril(a) if lo else np.triu(a), -1, -2) if ad else
                 (np.tril(a) if lo else np.triu(a)), b))(lower, adj),
             (WellConditioned((2, 3, 3)), Floats((2, 3, 2))), FLOATS, grad=2, rtol=1e-4)
      for lower in (True, False) for adj in (False, True)],
    OpCase("cholesky", {"Cholesky"}, tf.cholesky,
           lambda x: np.linalg.cholesky(_np_lower_symmetric(x)), (PositiveDefinite((2, 3, 3)),),
           FLOATS, grad=2, rtol=1e-4),
    OpCase("qr_square", {"Qr"}, lambda x: list(tf.qr(x)), lambda x: list(np.linalg.qr(x)),
           (WellConditioned((2, 3, 3)),), FLOATS, grad=1, rtol=1e-4, atol=1e-5),
    OpCase("qr_tall", {"Qr"}, lambda x: list(tf.linalg.qr(x)), lambda x: list(np.linalg.qr(x)),
           (Floats((5, 3)),), FLOATS, grad=1, rtol=1e-4, atol=1e-5),
    OpCase("qr_full_matrices", {"Qr"}, lambda x: list(tf.qr(x, full_matrices=True)),
           lambda x: list(np.linalg.qr(x, mode="complete")), (Floats((4, 2)),), FLOATS,
           rtol=1e-4, atol=1e-5),
    OpCase("svd_square", {"Svd"}, _tf_svd, _np_svd, (WellConditioned((2, 3, 3)),), FLOATS,
           grad=1, rtol=1e-4, atol=1e-5),
    OpCase("svd_tall", {"Svd"}, _tf_svd, _np_svd, (Floats((5, 3)),), FLOATS, grad=1,
           rtol=1e-4, atol=1e-5),
    OpCase("svd_wide", {"Svd"}, _tf_svd, _np_svd, (Floats((2, 3, 5)),), FLOATS, grad=1,
           rtol=1e-4, atol=1e-5),
    OpCase("svd_values_only", {"Svd"}, lambda x: tf.svd(x, compute_uv=False),
           lambda x: np.linalg.svd(x, compute_uv=False), (Floats((4, 3)),), FLOATS, grad=1,
           rtol=1e-4),
    OpCase("svd_reconstructs", {"Svd"},
           lambda x: (lambda s, u, v: tf.matmul(u * s[..., None, :], v, transpose_b=True))(
               *tf.svd(x)), lambda x: x, (Floats((2, 4, 3)),), FLOATS, grad=1, rtol=1e-4,
           atol=1e-5),
    OpCase("eigh", {"SelfAdjointEigV2"}, _tf_eigh, _np_eigh, (PositiveDefinite((2, 3, 3)),),
           FLOATS, grad=1, rtol=1e-4, atol=1e-5),
    OpCase("eigvalsh", {"SelfAdjointEigV2"}, tf.linalg.eigvalsh,
           lambda x: np.linalg.eigvalsh(_np_lower_symmetric(x)), (PositiveDefinite((4, 4)),),
           FLOATS, grad=1, rtol=1e-4),
]


def _np_band(x, lower, upper):
    i, j = np.indices(x.shape[-2:])
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return np.where(keep, x, 0)


def _np_set_diag(x, d):
    out = x.copy()
    k = min(x.shape[-2:])
    out[..., range(k), range(k)] = d
    return out


STRUCTURE_CASES = [
    *[OpCase(f"band_part_{lo}_{up}", {"MatrixBandPart"},
             (lambda a, b: lambda x: tf.matrix_band_part(x, a, b))(lo, up),
             (lambda a, b: lambda x: _np_band(x, a, b))(lo, up), (Floats((2, 3, 4)),),
             REALS, grad=2) for lo, up in ((0, -1), (-1, 0), (1, 1), (0, 0), (-1, -1))],
    OpCase("matrix_diag", {"MatrixDiag"}, tf.matrix_diag,
           lambda d: d[..., None] * np.eye(d.shape[-1]), (Floats((2, 3)),), REALS, grad=2),
    OpCase("matrix_diag_part", {"MatrixDiagPart"}, tf.linalg.diag_part,
           lambda x: np.diagonal(x, axis1=-2, axis2=-1), (Floats((2, 3, 4)),), REALS, grad=2),
    OpCase("matrix_set_diag", {"MatrixSetDiag"}, tf.matrix_set_diag, _np_set_diag,
           (Floats((2, 4, 3)), Floats((2, 3))), REALS, grad=2),
    OpCase("diag", {"Diag"}, tf.diag, lambda d: np.diag(d.reshape(-1)).reshape(d.shape * 2),
           (Floats((2, 3)),), REALS, grad=2),
    OpCase("diag_part", {"DiagPart"}, tf.diag_part,
           lambda x: np.diagonal(x.reshape(6, 6)).reshape(2, 3), (Floats((2, 3, 2, 3)),), REALS,
           grad=2),
    OpCase("cross", {"Cross"}, tf.cross, np.cross, (Floats((4, 3)), Floats((4, 3))), REALS,
           grad=2),
    OpCase("trace", {"MatrixDiagPart", "Sum"}, tf.trace,
           lambda x: np.trace(x, axis1=-2, axis2=-1), (Floats((2, 3, 3)),), REALS, grad=1),
    OpCase("matvec", {"BatchMatMulV2"}, tf.linalg.matvec,
           lambda a, b: np.einsum("...ij,...j->...i", a, b),
           (Floats((2, 3, 4)), Floats((2, 4))), FLOATS, grad=1),
    OpCase("adjoint", {"Transpose"}, tf.linalg.adjoint, lambda x: np.swapaxes(x, -1, -2),
           (Floats((2, 3, 4)),), REALS, grad=1),
]

COMPOSITE_CASES = [
    OpCase("logdet", {"Cholesky", "Log"}, tf.linalg.logdet,
           lambda x: np.linalg.slogdet(x)[1], (PositiveDefinite((2, 3, 3)),), FLOATS, grad=1,
           rtol=1e-4),
    OpCase("cholesky_solve", {"Cholesky", "MatrixTriangularSolve"},
           lambda a, b: tf.cholesky_solve(tf.cholesky(a), b), np.linalg.solve,
           (PositiveDefinite((3, 3)), Floats((3, 2))), FLOATS, grad=1, rtol=1e-4),
    OpCase("lstsq_tall", {"Cholesky"}, lambda a, b: tf.linalg.lstsq(a, b),
           lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], (Floats((6, 3)), Floats((6, 2))),
           FLOATS, grad=1, rtol=2e-3, atol=1e-4, modes=("static",)),
    OpCase("lstsq_wide_min_norm", {"Cholesky"}, lambda a, b: tf.matrix_solve_ls(a, b),
           lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], (Floats((2, 4)), Floats((2, 1))),
           FLOATS, grad=1, rtol=2e-3, atol=1e-4, modes=("static",)),
    OpCase("pinv", {"Svd"}, tf.linalg.pinv, np.linalg.pinv, (Floats((2, 4, 3)),), FLOATS,
           grad=1, rtol=1e-3, atol=1e-5),
]

CASES = DECOMPOSITION_CASES + STRUCTURE_CASES + COMPOSITE_CASES
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


# --- semantics and bad inputs ----------------------------------------------------------------
def _run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


def test_eye_static_and_dynamic_shapes():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        static, dynamic = tf.eye(2, 3, batch_shape=[2]), tf.eye(n, dtype=tf.int32)
        assert static.shape.as_list() == [2, 2, 3]
        value, grown = _run([static, dynamic], {n: 3})
        np.testing.assert_array_equal(value, np.broadcast_to(np.eye(2, 3), (2, 2, 3)))
        np.testing.assert_array_equal(grown, np.eye(3, dtype=np.int32))
        assert grown.dtype == np.int32


def test_matrix_rank_and_normalize():
    with tf.Graph().as_default():
        rank_deficient = np.outer(np.arange(1.0, 5.0), np.arange(1.0, 4.0))
        rank = tf.linalg.matrix_rank(tf.constant(np.stack([rank_deficient, np.eye(4, 3)])))
        unit, magnitude = tf.linalg.normalize(tf.constant([[3.0, 4.0]]), axis=1)
        r, u, m = _run([rank, unit, magnitude])
        np.testing.assert_array_equal(r, [1, 3])
        np.testing.assert_allclose(u, [[0.6, 0.8]])
        np.testing.assert_allclose(m, [[5.0]])


def test_bad_shapes_fail_where_built_naming_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="MatrixInverse.*square"):
            tf.matrix_inverse(tf.zeros([2, 3]))
        with pytest.raises(ValueError, match="MatrixSolve.*do not match"):
            tf.matrix_solve(tf.zeros([3, 3]), tf.zeros([2, 1]))
        with pytest.raises(ValueError, match="Cross.*3"):
            tf.cross(tf.zeros([2, 4]), tf.zeros([2, 4]))
        with pytest.raises(ValueError, match="MatrixSetDiag.*does not fit"):
            tf.matrix_set_diag(tf.zeros([3, 3]), tf.zeros([2]))
        with pytest.raises(ValueError, match="k=1"):
            tf.matrix_diag(tf.zeros([3]), k=1)


def test_singular_and_indefinite_inputs_raise_clear_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 2])
        inverse = tf.matrix_inverse(x, name="my_inverse")
        factor = tf.cholesky(x, name="my_cholesky")
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_inverse.*not invertible"):
            _run(inverse, {x: np.ones((2, 2))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="my_cholesky.*positive"):
            _run(factor, {x: [[1.0, 2.0], [2.0, 1.0]]})


def test_qr_gradient_refuses_wide_matrices_by_name():
    with tf.Graph().as_default():
        q, r = tf.qr(tf.zeros([2, 3]), name="wide_qr")
        with pytest.raises(NotImplementedError, match="wide_qr.*num_rows >= num_cols"):
            tf.gradients(tf.reduce_sum(r), [q.op.inputs[0]])


def test_tensordot_with_several_unknown_free_dimensions():
    """[batch, time, depth] @ [depth, units] with batch and time unknown (tf.layers.dense on an
    RNN's outputs): the output shape is taken at run time."""
    x = np.random.default_rng(0).normal(size=(2, 7, 5))
    w = np.random.default_rng(1).normal(size=(5, 3))
    with tf.Graph().as_default():
        feed = tf.placeholder(tf.float64, [None, None, 5])
        product = tf.tensordot(feed, w, [[2], [0]])
        assert product.shape.as_list() == [None, None, 3]
        with tf.Session() as session:
            got = session.run(product, {feed: x})
    np.testing.assert_allclose(got, np.tensordot(x, w, [[2], [0]]))
