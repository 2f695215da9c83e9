"""Kernels of the linear algebra ops beyond the classic decompositions: packed LU with partial
pivoting, the principal matrix square root (Denman-Beavers iteration), the principal matrix
logarithm of complex matrices, and tridiagonal solves. Results keep the input dtype."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


def _square(x, what):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise errors.InvalidArgumentError(None, None, f"{what} needs square matrices in the last "
                                          f"two dimensions, got shape {list(x.shape)}")


@register_kernel("Lu")
def lu(x, *, output_idx_type):
    """Doolittle elimination with partial pivoting (the first largest |pivot|, as LAPACK's
    getrf), each step applied to the whole batch at once."""
    _square(x, "Lu")
    n = x.shape[-1]
    if x.size == 0:
        return x.copy(), np.zeros(x.shape[:-1], dtype=output_idx_type.np_dtype)
    packed = x.reshape((-1, n, n)).copy()
    batch = np.arange(packed.shape[0])
    perms = np.broadcast_to(np.arange(n), (packed.shape[0], n)).copy()
    for k in range(n):
        pivots = k + np.argmax(np.abs(packed[:, k:, k]), axis=1)
        if np.any(packed[batch, pivots, k] == 0):
            raise errors.InvalidArgumentError(None, None, "Lu: input is not invertible (a zero "
                                              f"pivot in column {k})")
        rows_k, rows_pivot = packed[batch, k].copy(), packed[batch, pivots].copy()
        packed[batch, k], packed[batch, pivots] = rows_pivot, rows_k
        perm_k, perm_pivot = perms[batch, k].copy(), perms[batch, pivots].copy()
        perms[batch, k], perms[batch, pivots] = perm_pivot, perm_k
        packed[:, k + 1:, k] /= packed[:, k:k + 1, k]
        packed[:, k + 1:, k + 1:] -= packed[:, k + 1:, k:k + 1] * packed[:, k:k + 1, k + 1:]
    return (packed.reshape(x.shape),
            perms.astype(output_idx_type.np_dtype).reshape(x.shape[:-1]))


def _batched_inverse(x, what):
    try:
        return np.linalg.inv(x)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(None, None, f"{what}: an iterate became singular; the "
                                          "input has an eigenvalue at zero") from None


@register_kernel("MatrixSquareRoot")
def matrix_square_root(x):
    """Denman-Beavers: Y -> sqrt(A), Z -> sqrt(A)^-1, each step averaging one with the
    other's inverse. Converges (quadratically) to the principal root when no eigenvalue lies
    on the closed negative real axis; otherwise there is no real principal root."""
    _square(x, "MatrixSquareRoot")
    if x.shape[-1] == 0:
        return x.copy()
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    y, z = work.copy(), np.broadcast_to(np.eye(x.shape[-1], dtype=work.dtype), x.shape).copy()
    eps = np.finfo(work.dtype).eps
    for _ in range(100):
        y_inverse = _batched_inverse(y, "MatrixSquareRoot")
        z_inverse = _batched_inverse(z, "MatrixSquareRoot")
        y_next = (y + z_inverse) * work.dtype.type(0.5)
        z = (z + y_inverse) * work.dtype.type(0.5)
        change = np.max(np.abs(y_next - y)) if y.size else 0.0
        y = y_next
        if change <= 10 * eps * max(np.max(np.abs(y)), 1.0):
            break
    else:
        raise errors.InvalidArgumentError(None, None, "MatrixSquareRoot: no convergence; the "
                                          "input has an eigenvalue on the negative real axis "
                                          "(no real principal square root)")
    if not np.all(np.isfinite(y)):
        raise errors.InvalidArgumentError(None, None, "MatrixSquareRoot: non-finite result")
    return y.astype(x.dtype)


@register_kernel("MatrixLogarithm")
def matrix_logarithm(x):
    """The principal logarithm through the eigendecomposition V diag(log w) V^-1 (the input
    must be diagonalisable with no eigenvalue at zero)."""
    _square(x, "MatrixLogarithm")
    values, vectors = np.linalg.eig(x)
    if np.any(values == 0):
        raise errors.InvalidArgumentError(None, None, "MatrixLogarithm: the input is singular "
                                          "(an eigenvalue at zero has no logarithm)")
    if x.shape[-1] and np.any(np.linalg.cond(vectors) > 1 / np.finfo(x.dtype).eps):
        raise errors.InvalidArgumentError(None, None, "MatrixLogarithm: the input is defective "
                                          "(not diagonalisable); its eigenvectors are singular")
    scaled = vectors * np.log(values)[..., None, :]
    return np.linalg.solve(np.swapaxes(vectors, -1, -2),
                           np.swapaxes(scaled, -1, -2)).swapaxes(-1, -2).astype(x.dtype)


def tridiagonal_dense(diagonals):
    """[..., 3, M] compact diagonals (super, main, sub) -> [..., M, M]."""
    m = diagonals.shape[-1]
    dense = np.zeros(diagonals.shape[:-2] + (m, m), dtype=diagonals.dtype)
    rows = np.arange(m)
    dense[..., rows, rows] = diagonals[..., 1, :]
    dense[..., rows[:-1], rows[1:]] = diagonals[..., 0, :-1]
    dense[..., rows[1:], rows[:-1]] = diagonals[..., 2, 1:]
    return dense


@register_kernel("TridiagonalSolve")
def tridiagonal_solve(diagonals, rhs, *, partial_pivoting):
    """LAPACK's pivoted LU on the dense band. Without partial_pivoting TF runs the Thomas
    algorithm, which fails on a zero pivot: so does this kernel, checked up front."""
    if diagonals.ndim < 2 or diagonals.shape[-2] != 3:
        raise errors.InvalidArgumentError(None, None, "TridiagonalSolve: diagonals need shape "
                                          f"[..., 3, M], got {list(diagonals.shape)}")
    if rhs.ndim < 2 or rhs.shape[-2] != diagonals.shape[-1]:
        raise errors.InvalidArgumentError(None, None, f"TridiagonalSolve: rhs of shape "
                                          f"{list(rhs.shape)} does not match diagonals of shape "
                                          f"{list(diagonals.shape)}")
    work = diagonals.astype(np.float32) if diagonals.dtype == np.float16 else diagonals
    dense = tridiagonal_dense(work)
    if not partial_pivoting:
        _thomas_pivots_nonzero(work)
    try:
        solution = np.linalg.solve(dense, rhs.astype(work.dtype))
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError(None, None, "TridiagonalSolve: the tridiagonal matrix "
                                          "is singular") from None
    return solution.astype(rhs.dtype)


def _thomas_pivots_nonzero(diagonals):
    superdiag, main, subdiag = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    pivot = main[..., 0]
    for i in range(main.shape[-1]):
        if i:
            pivot = main[..., i] - subdiag[..., i] * superdiag[..., i - 1] / pivot
        if np.any(pivot == 0):
            raise errors.InvalidArgumentError(None, None, "TridiagonalSolve: a zero pivot "
                                              "without partial_pivoting; pass "
                                              "partial_pivoting=True")
