"""tf.linalg.expm, eigh_tridiagonal and experimental.conjugate_gradient, composed from graph
ops (so they place, partition and differentiate like any composition).

expm is Higham's (2005) scaling and squaring: A / 2^s has 1-norm below the Pade approximant's
theta, r = q(A)^-1 p(A), then r is squared s times (s per matrix, a while loop runs to the
largest s and leaves the finished matrices alone). float64 uses the [13/13] approximant
(theta 5.37), float32/float16 the [7/7] (theta 3.93), each accurate to its unit roundoff;
complex128 and complex64 likewise."""
import collections

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, reduction_ops, slicing_ops
from tensorweave.ops.clip_ops import norm
from tensorweave.ops.complex_ops import complex as complex_
from tensorweave.ops.cumulative_ops import cumsum
from tensorweave.ops.linalg_decomp_ops import eigh, eigvalsh, solve
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.math_compose_ops import imag, real
from tensorweave.ops.matrix_ops import eye, matrix_diag
from tensorweave.ops.pad_tile_ops import pad
from tensorweave.ops.special_math_ops import atan2
from tensorweave.ops.while_ops import while_loop

_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152
_PADE7 = (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.)
_THETA7 = 3.925724783138660
_EXPM_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.complex64,
               dtypes.complex128)
CGState = collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def _identity_like(matrices):
    shape = array_ops.shape(matrices)
    # Built real and cast: the diagonal ops take no complex types.
    identity = eye(shape[-1], batch_shape=shape[:-2], dtype=matrices.dtype.real_dtype)
    return math_ops.cast(identity, matrices.dtype)


def _pade13(a, identity):
    b = _PADE13
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    u_inner = matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
    u = matmul(a, u_inner + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
    v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + \
        b[0] * identity
    return u, v


def _pade7(a, identity):
    b = _PADE7
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    u = matmul(a, b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
    v = b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
    return u, v


def expm(input, name=None):  # noqa: A002 - TF's argument name
    """The matrix exponential of each matrix in the last two dimensions."""
    matrix = convert_to_tensor(input, name="input")
    if matrix.dtype not in _EXPM_TYPES:
        raise TypeError(f"expm needs float16/32/64 or complex64/128 input, got "
                        f"{matrix.dtype.name}")
    if matrix.shape.ndims is not None and matrix.shape.ndims < 2:
        raise ValueError(f"expm needs matrices (rank >= 2), got shape {matrix.shape}")
    wide = matrix.dtype in (dtypes.float64, dtypes.complex128)
    theta, approximant = (_THETA13, _pade13) if wide else (_THETA7, _pade7)
    one_norm = reduction_ops.reduce_max(
        reduction_ops.reduce_sum(math_ops.abs(array_ops.stop_gradient(matrix)), -2), -1)
    squarings = math_ops.maximum(
        math_ops.ceil(math_ops.log(one_norm / theta) / np.log(2.0)),
        array_ops.zeros_like(one_norm))
    squarings = math_ops.select(math_ops.is_finite(squarings), squarings,
                                array_ops.zeros_like(squarings))
    scale = array_ops.expand_dims(array_ops.expand_dims(math_ops.pow(
        array_ops.ones_like(squarings) * 2.0, -squarings), -1), -1)
    scaled = matrix * math_ops.cast(scale, matrix.dtype)
    u, v = approximant(scaled, _identity_like(matrix))
    result = solve(v - u, v + u)
    counts = array_ops.expand_dims(array_ops.expand_dims(squarings, -1), -1)
    rounds = math_ops.cast(reduction_ops.reduce_max(squarings), dtypes.int32)

    def square_some(step, current):
        pending = math_ops.less(math_ops.cast(step, counts.dtype), counts)
        squared = matmul(current, current)
        return step + 1, math_ops.where_v2(pending, squared, current)

    _, result = while_loop(lambda step, _current: math_ops.less(step, rounds), square_some,
                           [array_ops.zeros([], dtypes.int32), result])
    return array_ops.identity(result, name=name or "expm")


def _tridiagonal_matrix(alpha, beta):
    """[n] main and [n-1] off diagonal -> the symmetric [n, n] matrix."""
    off = matrix_diag(beta)
    return matrix_diag(alpha) + pad(off, [[0, 1], [1, 0]]) + pad(off, [[1, 0], [0, 1]])


def _hermitian_to_real(alpha, beta):
    """T (Hermitian tridiagonal, super-diagonal beta) = D S D^H with S real symmetric
    (off-diagonal |beta|) and D = diag(exp(i c)), c_0 = 0, c_k+1 = c_k - arg(beta_k): S has
    T's eigenvalues and T's eigenvectors are D times S's. Returns (S's alpha, beta, c)."""
    beta_real, beta_imag = real(beta), imag(beta)
    angles = slicing_ops.concat([array_ops.zeros_like(beta_real[:1]),
                                 cumsum(-atan2(beta_imag, beta_real))], 0)
    return real(alpha), math_ops.abs(beta), angles


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None,
                     name=None):
    """Eigenvalues (ascending; with eigenvectors as columns unless eigvals_only) of the
    Hermitian tridiagonal matrix with diagonal alpha [n] and super-diagonal beta [n-1] (the
    sub-diagonal is conj(beta); a complex alpha's imaginary part is ignored, as TF does).
    select 'a' all, 'i' the eigenvalues of indices select_range = [lo, hi] (inclusive), 'v'
    those in the half-open interval (lo, hi]. tol is accepted for TF's signature (LAPACK's
    tolerance governs)."""
    alpha = convert_to_tensor(alpha, name="alpha")
    beta = convert_to_tensor(beta, name="beta")
    if alpha.shape.ndims not in (None, 1) or beta.shape.ndims not in (None, 1):
        raise ValueError(f"eigh_tridiagonal: alpha and beta must be vectors, got shapes "
                         f"{alpha.shape} and {beta.shape}")
    if select not in ("a", "i", "v"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    if select != "a" and (select_range is None or len(select_range) != 2):
        raise ValueError(f"eigh_tridiagonal: select={select!r} needs select_range=(lo, hi)")
    angles = None
    if alpha.dtype.is_complex or beta.dtype.is_complex:
        complex_dtype = alpha.dtype if alpha.dtype.is_complex else beta.dtype
        alpha, beta, angles = _hermitian_to_real(math_ops.cast(alpha, complex_dtype),
                                                 math_ops.cast(beta, complex_dtype))
    else:
        beta = math_ops.cast(beta, alpha.dtype)
    matrix = _tridiagonal_matrix(alpha, beta)
    if eigvals_only:
        values, vectors = eigvalsh(matrix), None
    else:
        values, vectors = eigh(matrix)
        if angles is not None:
            phases = complex_(math_ops.cos(angles), math_ops.sin(angles))
            vectors = array_ops.expand_dims(phases, -1) * math_ops.cast(vectors, phases.dtype)
    if select == "i":
        lo, hi = int(select_range[0]), int(select_range[1])
        values = values[lo:hi + 1]
        vectors = None if vectors is None else vectors[:, lo:hi + 1]
    elif select == "v":
        lo = convert_to_tensor(select_range[0], dtype=values.dtype)
        hi = convert_to_tensor(select_range[1], dtype=values.dtype)
        keep = math_ops.logical_and(math_ops.greater(values, lo), math_ops.less_equal(values, hi))
        values = slicing_ops.boolean_mask(values, keep)
        vectors = None if vectors is None else slicing_ops.boolean_mask(vectors, keep, axis=1)
    values = array_ops.identity(values, name=name or "eigh_tridiagonal")
    return values if eigvals_only else (values, vectors)


def _dot(x, y):
    return reduction_ops.reduce_sum(math_ops.conj(x) * y, -1)


def conjugate_gradient(operator, rhs, preconditioner=None, x=None, tol=1e-5, max_iter=20,
                       name="conjugate_gradient"):
    """Solves operator x = rhs for a self-adjoint positive definite operator (anything with a
    matvec) by conjugate gradients, stopping when every ||r|| <= tol * ||r0|| or after
    max_iter steps. Returns CGState(i, x, r, p, gamma)."""
    rhs = convert_to_tensor(rhs, name="rhs")
    for flag in ("is_self_adjoint", "is_positive_definite"):
        if getattr(operator, flag, None) is False:
            raise ValueError(f"conjugate_gradient: the operator must be self-adjoint and "
                             f"positive definite, but {flag}=False")
    x = array_ops.zeros_like(rhs) if x is None else convert_to_tensor(x, dtype=rhs.dtype)
    residual = rhs - operator.matvec(x)
    direction = residual if preconditioner is None else preconditioner.matvec(residual)
    gamma = _dot(residual, direction)
    limit = tol * norm(residual, axis=-1)
    limit = math_ops.cast(limit, rhs.dtype.real_dtype) if rhs.dtype.is_complex else limit

    def keep_going(i, state):
        return math_ops.logical_and(
            math_ops.less(i, max_iter),
            reduction_ops.reduce_any(math_ops.greater(norm(state.r, axis=-1), limit)))

    def step(i, state):
        product = operator.matvec(state.p)
        alpha = state.gamma / _dot(state.p, product)
        x_next = state.x + array_ops.expand_dims(alpha, -1) * state.p
        r_next = state.r - array_ops.expand_dims(alpha, -1) * product
        q = r_next if preconditioner is None else preconditioner.matvec(r_next)
        gamma_next = _dot(r_next, q)
        p_next = q + array_ops.expand_dims(gamma_next / state.gamma, -1) * state.p
        return i + 1, CGState(i + 1, x_next, r_next, p_next, gamma_next)

    start = array_ops.zeros([], dtypes.int32)
    _, state = while_loop(keep_going, step,
                          [start, CGState(start, x, residual, direction, gamma)])
    return CGState(*state)
