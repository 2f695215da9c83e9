"""LU and its solves, expm, sqrtm, logm, tridiagonal products and solves, eigh_tridiagonal and
conjugate gradients, against NumPy references (plain-loop Gaussian elimination, Taylor series
with scaling, eigendecompositions, dense solves), with numeric gradients in float64."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing import gradient_checker

from .op_harness import (Floats, OpCase, check_case_gradient, check_gradient_rows_cover,
                         check_kernel_precision, covered, gradient_params, precision_params,
                         run_case, value_params)
from .test_linalg_ops import PositiveDefinite, WellConditioned


def np_lu(a):
    """Gaussian elimination with partial pivoting, one matrix at a time, in plain loops."""
    a = np.array(a, dtype=np.float64)
    packed, perms = np.empty_like(a), np.empty(a.shape[:-1], dtype=np.int32)
    for index in np.ndindex(a.shape[:-2]):
        m = a[index].copy()
        n = m.shape[0]
        order = list(range(n))
        for col in range(n):
            best = max(range(col, n), key=lambda row: abs(m[row, col]))
            m[[col, best]] = m[[best, col]]
            order[col], order[best] = order[best], order[col]
            for row in range(col + 1, n):
                m[row, col] /= m[col, col]
                for k in range(col + 1, n):
                    m[row, k] -= m[row, col] * m[col, k]
        packed[index], perms[index] = m, order
    return [packed, perms]


def np_expm(a):
    """Taylor series of A / 2^10, squared back ten times."""
    a = np.asarray(a)
    scaled = a.astype(np.result_type(a, np.float64)) / 1024.0
    term = total = np.broadcast_to(np.eye(a.shape[-1], dtype=scaled.dtype), a.shape).copy()
    for k in range(1, 30):
        term = term @ scaled / k
        total = total + term
    for _ in range(10):
        total = total @ total
    return total


def np_sqrtm(a):
    values, vectors = np.linalg.eig(a)
    return ((vectors * np.sqrt(values)[..., None, :]) @ np.linalg.inv(vectors)).real


def np_logm_spd(a):
    values, vectors = np.linalg.eigh(a)
    return (vectors * np.log(values)[..., None, :]) @ np.swapaxes(vectors, -1, -2)


def np_logm_rotation(a):
    """Closed form: log of r [[cos t, -sin t], [sin t, cos t]] is [[log r, -t], [t, log r]]."""
    radius, angle = np.hypot(a[0, 0], a[1, 0]), np.arctan2(a[1, 0], a[0, 0])
    out = np.zeros((3, 3))
    out[:2, :2] = [[np.log(radius), -angle], [angle, np.log(radius)]]
    out[2, 2] = np.log(a[2, 2])
    return out


class PositiveSpectrum:
    """Non-symmetric matrices with real positive eigenvalues: V diag(w) V^-1."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __call__(self, rng, dtype):
        n = self.shape[-1]
        vectors = rng.uniform(-0.5, 0.5, self.shape) + np.eye(n)
        values = rng.uniform(0.5, 3.0, self.shape[:-1])
        return ((vectors * values[..., None, :]) @ np.linalg.inv(vectors)).astype(dtype)


class Rotations:
    """Scaled 2-D rotations (complex eigenvalues r e^{+-i t}, |t| < pi) in a 3x3 block."""

    def __call__(self, rng, dtype):
        t, r = rng.uniform(-2.5, 2.5), rng.uniform(0.5, 2.0)
        block = r * np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        out = np.eye(3) * 1.5
        out[:2, :2] = block
        return out.astype(dtype)


class DominantDiagonals:
    """[..., 3, M] compact diagonals whose matrix is diagonally dominant."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __call__(self, rng, dtype):
        d = rng.uniform(-1, 1, self.shape)
        d[..., 1, :] += np.where(d[..., 1, :] >= 0, 3.0, -3.0)
        d[..., 0, -1] = 0
        d[..., 2, 0] = 0
        return d.astype(dtype)


def np_tridiagonal(d):
    m = d.shape[-1]
    out = np.zeros(d.shape[:-2] + (m, m), dtype=d.dtype)
    i = np.arange(m)
    out[..., i, i] = d[..., 1, :]
    out[..., i[:-1], i[1:]] = d[..., 0, :-1]
    out[..., i[1:], i[:-1]] = d[..., 2, 1:]
    return out


def _sequence(d):
    return [d[..., 0, :], d[..., 1, :], d[..., 2, :]]


def _lu_then(fn):
    return lambda a, *rest: fn(*tf.linalg.lu(a), *rest)


def _symmetric_tridiagonal(alpha, beta):
    return np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1)


CASES = [
    OpCase("lu", {"Lu"}, lambda a: list(tf.linalg.lu(a)), np_lu, (WellConditioned((2, 4, 4)),),
           out_dtype=[None, np.int32], grad=1),
    OpCase("lu_int64", {"Lu"}, lambda a: tf.linalg.lu(a, output_idx_type=tf.int64).p,
           lambda a: np_lu(a)[1], (Floats((3, 3)),), out_dtype=np.int64),
    OpCase("lu_reconstruct", {"Lu"}, _lu_then(tf.linalg.lu_reconstruct), lambda a: a,
           (Floats((2, 3, 3)),), grad=1),
    OpCase("lu_solve", {"Lu", "MatrixTriangularSolve"}, _lu_then(tf.linalg.lu_solve),
           np.linalg.solve, (WellConditioned((2, 3, 3)), Floats((2, 3, 2))), grad=1),
    OpCase("lu_matrix_inverse", {"Lu", "MatrixTriangularSolve"},
           _lu_then(tf.linalg.lu_matrix_inverse), np.linalg.inv, (WellConditioned((4, 4)),),
           grad=1),
    OpCase("expm_small", {"MatrixSolve"}, tf.linalg.expm, np_expm, (Floats((2, 3, 3), -0.3, 0.3),),
           grad=1, modes=("static", "unknown"), rtol=1e-4),
    OpCase("expm_squared", {"MatrixSolve"}, tf.linalg.expm, np_expm,
           (Floats((2, 3, 3), -3, 3),), grad=1, modes=("static",), rtol=1e-4, atol=1e-4,
           grad_rtol=1e-4),
    OpCase("sqrtm_spd", {"MatrixSquareRoot"}, tf.linalg.sqrtm, np_sqrtm,
           (PositiveDefinite((2, 3, 3)),), grad=2, rtol=1e-4),
    OpCase("sqrtm_nonsymmetric", {"MatrixSquareRoot"}, tf.linalg.sqrtm, np_sqrtm,
           (PositiveSpectrum((4, 4)),), grad=1, rtol=1e-4, atol=1e-4),
    OpCase("logm_spd", {"MatrixLogarithm"},
           lambda a: tf.real(tf.linalg.logm(tf.cast(a, tf.complex128))),
           np_logm_spd, (PositiveDefinite((2, 3, 3)),), dtypes=(np.float64,)),
    OpCase("logm_rotation", {"MatrixLogarithm"}, lambda a: [
        tf.real(tf.linalg.logm(tf.cast(a, tf.complex64))),
        tf.imag(tf.linalg.logm(tf.cast(a, tf.complex64)))],
        lambda a: [np_logm_rotation(a), np.zeros((3, 3))], (Rotations(),), dtypes=(np.float32,),
        atol=1e-5),
    OpCase("tridiagonal_solve", {"TridiagonalSolve"}, tf.linalg.tridiagonal_solve,
           lambda d, b: np.linalg.solve(np_tridiagonal(d), b),
           (DominantDiagonals((2, 3, 5)), Floats((2, 5, 2))), grad=2),
    OpCase("tridiagonal_solve_sequence_vector", {"TridiagonalSolve"},
           lambda d, b: tf.linalg.tridiagonal_solve(_sequence(d), b, "sequence",
                                                    partial_pivoting=False),
           lambda d, b: np.linalg.solve(np_tridiagonal(d), b[..., None])[..., 0],
           (DominantDiagonals((3, 4)), Floats((4,))), grad=1, modes=("static", "partial")),
    OpCase("tridiagonal_solve_matrix_transposed", {"TridiagonalSolve"},
           lambda a, b: tf.linalg.tridiagonal_solve(a, b, "matrix", transpose_rhs=True),
           lambda a, b: np.linalg.solve(np_tridiagonal(np.stack(
               [np.append(np.diag(a, 1), 0), np.diag(a), np.insert(np.diag(a, -1), 0, 0)])),
               b.T), (WellConditioned((4, 4)), Floats((3, 4))), grad=1),
    OpCase("tridiagonal_matmul", {"ConcatV2"}, tf.linalg.tridiagonal_matmul,
           lambda d, b: np_tridiagonal(d) @ b, (DominantDiagonals((2, 3, 4)), Floats((2, 4, 3))),
           grad=1),
    OpCase("tridiagonal_matmul_sequence", {"ConcatV2"},
           lambda d, b: tf.linalg.tridiagonal_matmul(_sequence(d), b, "sequence"),
           lambda d, b: np_tridiagonal(d) @ b, (DominantDiagonals((3, 5)), Floats((5, 2))),
           grad=1),
    OpCase("eigh_tridiagonal_values", {"SelfAdjointEigV2"}, tf.linalg.eigh_tridiagonal,
           lambda a, b: np.linalg.eigvalsh(_symmetric_tridiagonal(a, b)),
           (Floats((5,)), Floats((4,))), grad=1, modes=("static",)),
    OpCase("eigh_tridiagonal_vectors", {"SelfAdjointEigV2"}, lambda a, b: tf.abs(
        tf.linalg.eigh_tridiagonal(a, b, eigvals_only=False)[1]),
        lambda a, b: np.abs(np.linalg.eigh(_symmetric_tridiagonal(a, b))[1]),
        (Floats((4,)), Floats((3,), 0.2, 1)), modes=("static",)),
    OpCase("eigh_tridiagonal_index_range", {"SelfAdjointEigV2"},
           lambda a, b: tf.linalg.eigh_tridiagonal(a, b, select="i", select_range=(1, 2)),
           lambda a, b: np.linalg.eigvalsh(_symmetric_tridiagonal(a, b))[1:3],
           (Floats((5,)), Floats((4,))), modes=("static",), static_exact=False),
    OpCase("eigh_tridiagonal_value_range", {"SelfAdjointEigV2"},
           lambda a, b: tf.linalg.eigh_tridiagonal(a, b, select="v", select_range=(-0.5, 1.0)),
           lambda a, b: np.array([v for v in np.linalg.eigvalsh(_symmetric_tridiagonal(a, b))
                                  if -0.5 < v <= 1.0]),
           (Floats((6,)), Floats((5,))), modes=("static",), static_exact=False),
]

COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


# expm's graph holds a While loop, whose kernel takes a function the tracked-array replay
# cannot give; the kernels inside it (MatMul, MatrixSolve, ...) are checked in their own rows.
@pytest.mark.parametrize("case,dtype", precision_params(
    [case for case in CASES if not case.name.startswith("expm")]))
def test_kernels_compute_in_the_input_precision(case, dtype):
    check_kernel_precision(case, dtype)


def test_every_differentiable_op_has_a_gradient_row():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


class _Dense:
    def __init__(self, matrix):
        self.matrix = tf.convert_to_tensor(matrix)

    def matvec(self, x):
        return tf.linalg.matvec(self.matrix, x)


def test_conjugate_gradient_solves_and_counts_steps():
    rng = np.random.default_rng(3)
    a = PositiveDefinite((2, 5, 5))(rng, np.float64)
    b = rng.normal(size=(2, 5))
    with tf.Graph().as_default():
        state = tf.linalg.experimental.conjugate_gradient(_Dense(a), b, tol=1e-12, max_iter=50)
        jacobi = _Dense(np.linalg.inv(np.diag(np.diag(a[0]))))
        preconditioned = tf.linalg.experimental.conjugate_gradient(_Dense(a[0]), b[0],
                                                                  preconditioner=jacobi,
                                                                  tol=1e-12, max_iter=50)
        capped = tf.linalg.experimental.conjugate_gradient(_Dense(a), b, max_iter=2)
        with tf.Session() as session:
            state, preconditioned, capped = session.run([state, preconditioned, capped])
    np.testing.assert_allclose(state.x, np.linalg.solve(a, b[..., None])[..., 0], rtol=1e-9)
    np.testing.assert_allclose(preconditioned.x, np.linalg.solve(a[0], b[0]), rtol=1e-9)
    assert 1 <= state.i <= 6 and capped.i == 2
    np.testing.assert_allclose(state.r, b - np.einsum("bij,bj->bi", a, state.x), atol=1e-9)


def test_sqrtm_squares_back_and_lu_reconstructs_float32():
    rng = np.random.default_rng(4)
    a = PositiveSpectrum((3, 3))(rng, np.float32)
    with tf.Graph().as_default():
        root = tf.linalg.sqrtm(a)
        packed, perm = tf.linalg.lu(a)
        with tf.Session() as session:
            root, back = session.run([root, tf.linalg.lu_reconstruct(packed, perm)])
    assert root.dtype == np.float32 and back.dtype == np.float32
    np.testing.assert_allclose(root @ root, a, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(back, a, rtol=1e-5, atol=1e-6)


def test_bad_input_names_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="lu needs square"):
            tf.linalg.lu(tf.zeros([2, 3]))
        with pytest.raises(TypeError, match="logm needs complex"):
            tf.linalg.logm(tf.eye(2))
        with pytest.raises(ValueError, match="diagonals_format"):
            tf.linalg.tridiagonal_solve(tf.zeros([3, 4]), tf.zeros([4, 1]), "banded")
        with pytest.raises(ValueError, match="select_range"):
            tf.linalg.eigh_tridiagonal([1.0, 2.0], [0.5], select="i")
        negative = tf.linalg.sqrtm(tf.constant([[-1.0, 0.0], [0.0, 1.0]], tf.float64))
        singular = tf.linalg.lu(tf.zeros([2, 2]))
        with tf.Session() as session:
            with pytest.raises(errors.InvalidArgumentError, match="MatrixSquareRoot"):
                session.run(negative)
            with pytest.raises(errors.InvalidArgumentError, match="Lu"):
                session.run(singular)


def test_logm_of_a_complex_normal_matrix():
    rng = np.random.default_rng(5)
    unitary, _ = np.linalg.qr(rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4)))
    values = rng.uniform(0.5, 2, 4) * np.exp(1j * rng.uniform(-3, 3, 4))
    a = (unitary * values) @ unitary.conj().T
    with tf.Graph().as_default():
        with tf.Session() as session:
            log64, log128 = session.run([tf.linalg.logm(a.astype(np.complex64)),
                                         tf.linalg.logm(a)])
    want = (unitary * np.log(values)) @ unitary.conj().T
    assert log64.dtype == np.complex64 and log128.dtype == np.complex128
    np.testing.assert_allclose(log128, want, atol=1e-12)
    np.testing.assert_allclose(log64, want, atol=2e-5)


def test_complex_expm_and_tridiagonal_solve():
    rng = np.random.default_rng(6)
    a = rng.normal(size=(2, 3, 3)) + 1j * rng.normal(size=(2, 3, 3))
    diagonals = DominantDiagonals((3, 4))(rng, np.float64) + 1j * rng.uniform(-1, 1, (3, 4))
    rhs = rng.normal(size=(4, 2)) + 1j * rng.normal(size=(4, 2))
    with tf.Graph().as_default():
        with tf.Session() as session:
            e128, e64, solved = session.run([tf.linalg.expm(a),
                                             tf.linalg.expm(a.astype(np.complex64)),
                                             tf.linalg.tridiagonal_solve(diagonals, rhs)])
    want = np_expm(a)
    np.testing.assert_allclose(e128, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(e64, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(solved, np.linalg.solve(np_tridiagonal(diagonals), rhs),
                               atol=1e-12)


def test_complex_tridiagonal_solve_gradient_through_real_and_imaginary_parts():
    rng = np.random.default_rng(8)
    diagonals = DominantDiagonals((3, 4))(rng, np.float64)

    def loss(d_real, d_imag, b_real, b_imag):
        solution = tf.linalg.tridiagonal_solve(tf.complex(d_real, d_imag),
                                               tf.complex(b_real, b_imag))
        return [tf.real(solution), tf.imag(solution)]

    gradient_checker.check_gradients(loss, [diagonals, rng.uniform(-0.5, 0.5, (3, 4)),
                                            rng.normal(size=(4, 2)), rng.normal(size=(4, 2))])


def test_eigh_tridiagonal_of_a_hermitian_matrix():
    rng = np.random.default_rng(9)
    alpha = rng.normal(size=5) + 1j * rng.normal(size=5)   # imaginary part ignored, as TF
    beta = rng.normal(size=4) + 1j * rng.normal(size=4)
    beta[2] = 0
    dense = np.diag(alpha.real) + np.diag(beta, 1) + np.diag(beta.conj(), -1)
    with tf.Graph().as_default():
        values, vectors = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
        values64 = tf.linalg.eigh_tridiagonal(alpha.astype(np.complex64),
                                              beta.astype(np.complex64), select="i",
                                              select_range=(1, 3))
        with tf.Session() as session:
            values, vectors, values64 = session.run([values, vectors, values64])
    assert values.dtype == np.float64 and vectors.dtype == np.complex128
    assert values64.dtype == np.float32
    np.testing.assert_allclose(values, np.linalg.eigvalsh(dense), atol=1e-12)
    np.testing.assert_allclose(values64, np.linalg.eigvalsh(dense)[1:4], atol=1e-5)
    np.testing.assert_allclose(dense @ vectors, vectors * values, atol=1e-12)
    np.testing.assert_allclose(vectors.conj().T @ vectors, np.eye(5), atol=1e-12)


def test_complex_lu_factors():
    rng = np.random.default_rng(10)
    a = rng.normal(size=(2, 4, 4)) + 1j * rng.normal(size=(2, 4, 4))
    with tf.Graph().as_default():
        with tf.Session() as session:
            packed, perm = session.run(tf.linalg.lu(a.astype(np.complex64)))
    assert packed.dtype == np.complex64
    for matrix, factors, order in zip(a, packed, perm):
        lower, upper = np.tril(factors, -1) + np.eye(4), np.triu(factors)
        np.testing.assert_allclose(lower @ upper, matrix[order], atol=1e-5)
        assert np.all(np.abs(np.tril(factors, -1)) <= 1 + 1e-6)   # partial pivoting
