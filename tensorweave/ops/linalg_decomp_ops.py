"""Determinants, inverses, solves and decompositions over batches of matrices (the last two
dimensions), with their gradients as graph ops, and the TF 1.x functions composed from them
(logdet, cholesky_solve, lstsq, pinv, matrix_rank).

Gradients follow the standard matrix-calculus results: d det = det tr(A^-1 dA); d A^-1 =
-A^-1 dA A^-1; Cholesky's by Murray (2016); QR's for the reduced factorisation of a tall or
square matrix; SVD's by Townsend (2016), including the projections onto the complements of U
and V; the symmetric eigendecomposition's through 1 / (e_j - e_i). Like the kernels (which read
only the lower triangle of a symmetric input), Cholesky's and eigh's gradients land in the lower
triangle."""
import collections

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, check_ops, control_flow_ops, math_ops, reduction_ops
from tensorweave.ops.clip_ops import norm
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.matrix_ops import (adjoint, band_part, matrix_diag, matrix_diag_part,
                                        matrix_set_diag)
from tensorweave.ops.op_util import convert_pair, make_op, make_tensor

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
TensorShape = tensor_shape.TensorShape
QrResult = collections.namedtuple("Qr", ["q", "r"])
EighResult = collections.namedtuple("SelfAdjointEigV2", ["e", "v"])
SlogdetResult = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def _dims(shape):
    return None if shape.ndims is None else shape.as_list()


def _square(op, what):
    shape = op.inputs[0].shape
    dims = _dims(shape)
    if dims is not None:
        if len(dims) < 2:
            raise ValueError(f"{what} needs a matrix (rank >= 2), got shape {shape}")
        if dims[-1] is not None and dims[-2] is not None and dims[-1] != dims[-2]:
            raise ValueError(f"{what} needs square matrices, got shape {shape}")
    return dims


def _square_shape(what):
    def shape_fn(op):
        _square(op, what)
        return [op.inputs[0].shape]
    return shape_fn


def _batch_scalar_shape(what, outputs=1):
    def shape_fn(op):
        dims = _square(op, what)
        return [TensorShape(None if dims is None else dims[:-2])] * outputs
    return shape_fn


def _solve_shape(what):
    def shape_fn(op):
        matrix = _square(op, what)
        rhs = _dims(op.inputs[1].shape)
        if rhs is not None and len(rhs) < 2:
            raise ValueError(f"{what}: rhs needs rank >= 2, got shape {op.inputs[1].shape}")
        if matrix is not None and rhs is not None and None not in (matrix[-1], rhs[-2]) and \
                matrix[-1] != rhs[-2]:
            raise ValueError(f"{what}: matrix of shape {op.inputs[0].shape} and rhs of shape "
                             f"{op.inputs[1].shape} do not match")
        return [op.inputs[1].shape]
    return shape_fn


register_op("MatrixDeterminant", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": "type"}, shape_fn=_batch_scalar_shape("matrix_determinant"),
            allowed_types={"T": _FLOATS})
register_op("LogMatrixDeterminant", inputs=["input: T"],
            outputs=["sign: T", "log_abs_determinant: T"], attrs={"T": "type"},
            shape_fn=_batch_scalar_shape("log_matrix_determinant", 2),
            allowed_types={"T": _FLOATS})
register_op("MatrixInverse", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": "type", "adjoint": ("bool", False)},
            shape_fn=_square_shape("matrix_inverse"), allowed_types={"T": _FLOATS})
register_op("MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
            attrs={"T": "type", "adjoint": ("bool", False)},
            shape_fn=_solve_shape("matrix_solve"),
            allowed_types={"T": _FLOATS + (dtypes.complex64, dtypes.complex128)})
register_op("MatrixTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
            attrs={"T": "type", "lower": ("bool", True), "adjoint": ("bool", False)},
            shape_fn=_solve_shape("matrix_triangular_solve"), allowed_types={"T": _FLOATS})
register_op("Cholesky", inputs=["input: T"], outputs=["output: T"], attrs={"T": "type"},
            shape_fn=_square_shape("cholesky"), allowed_types={"T": _FLOATS})


def _inverse_transposed(x):
    return inv(x, adjoint=True)


def _as_matrices(values):
    """[...] -> [..., 1, 1], to scale whole matrices."""
    return array_ops.expand_dims(array_ops.expand_dims(values, -1), -1)


@register_gradient("MatrixDeterminant")
def _determinant_grad(op, grad):
    return [_as_matrices(grad * op.outputs[0]) * _inverse_transposed(op.inputs[0])]


@register_gradient("LogMatrixDeterminant")
def _log_determinant_grad(op, _sign_grad, grad):
    return [_as_matrices(grad) * _inverse_transposed(op.inputs[0])]


@register_gradient("MatrixInverse")
def _inverse_grad(op, grad):
    inverse = op.outputs[0]
    grad_a = -matmul(inverse, matmul(grad, inverse, adjoint_b=True), adjoint_a=True)
    return [adjoint(grad_a) if op.get_attr("adjoint") else grad_a]


@register_gradient("MatrixSolve")
def _solve_grad(op, grad):
    matrix, solution, adjoint_ = op.inputs[0], op.outputs[0], op.get_attr("adjoint")
    grad_rhs = solve(matrix, grad, adjoint=not adjoint_)
    if adjoint_:
        return [-matmul(solution, grad_rhs, adjoint_b=True), grad_rhs]
    return [-matmul(grad_rhs, solution, adjoint_b=True), grad_rhs]


@register_gradient("MatrixTriangularSolve")
def _triangular_solve_grad(op, grad):
    matrix, solution = op.inputs[0], op.outputs[0]
    lower, adjoint_ = op.get_attr("lower"), op.get_attr("adjoint")
    grad_rhs = triangular_solve(matrix, grad, lower=lower, adjoint=not adjoint_)
    if adjoint_:
        grad_matrix = -matmul(solution, grad_rhs, adjoint_b=True)
    else:
        grad_matrix = -matmul(grad_rhs, solution, adjoint_b=True)
    return [band_part(grad_matrix, -1, 0) if lower else band_part(grad_matrix, 0, -1), grad_rhs]


def _identity_like(matrices):
    return matrix_set_diag(array_ops.zeros_like(matrices),
                           array_ops.ones_like(matrix_diag_part(matrices)))


@register_gradient("Cholesky")
def _cholesky_grad(op, grad):
    factor = op.outputs[0]
    factor_inverse = triangular_solve(factor, _identity_like(factor), lower=True)
    middle = matmul(factor, grad, adjoint_a=True)
    middle = band_part(matrix_set_diag(middle, 0.5 * matrix_diag_part(middle)), -1, 0)
    grad_a = matmul(matmul(factor_inverse, middle, adjoint_a=True), factor_inverse)
    symmetric = (grad_a + adjoint(grad_a)) * 0.5
    # The kernel reads only the lower triangle: fold the upper half's share onto it.
    lower = band_part(symmetric + adjoint(symmetric), -1, 0)
    return [matrix_set_diag(lower, 0.5 * matrix_diag_part(lower))]


# --- QR, SVD, eigh -------------------------------------------------------------------------------
def _qr_shape(op):
    dims = _dims(op.inputs[0].shape)
    if dims is None:
        return [TensorShape(None)] * 2
    if len(dims) < 2:
        raise ValueError(f"qr needs a matrix (rank >= 2), got shape {op.inputs[0].shape}")
    *batch, rows, cols = dims
    k = None if rows is None or cols is None else min(rows, cols)
    if op.get_attr("full_matrices"):
        return [TensorShape(batch + [rows, rows]), TensorShape(batch + [rows, cols])]
    return [TensorShape(batch + [rows, k]), TensorShape(batch + [k, cols])]


register_op("Qr", inputs=["input: T"], outputs=["q: T", "r: T"],
            attrs={"T": "type", "full_matrices": ("bool", False)}, shape_fn=_qr_shape,
            allowed_types={"T": _FLOATS})


def _static_rows_cols(tensor):
    dims = _dims(tensor.shape)
    return (None, None) if dims is None else (dims[-2], dims[-1])


def _right_triangular_solve(x, r):
    """x @ inverse(r) for upper-triangular r."""
    return adjoint(triangular_solve(r, adjoint(x), lower=False))


@register_gradient("Qr")
def _qr_grad(op, grad_q, grad_r):
    a, q, r = op.inputs[0], op.outputs[0], op.outputs[1]
    rows, cols = _static_rows_cols(a)
    if op.get_attr("full_matrices") or (rows is not None and cols is not None and rows < cols):
        raise NotImplementedError(
            f"The gradient of qr ({op.name}) is defined for full_matrices=False and matrices "
            f"with num_rows >= num_cols; got shape {a.shape}, full_matrices="
            f"{op.get_attr('full_matrices')}")
    if rows is None or cols is None:  # checked when the gradient runs
        dims = array_ops.shape(a)
        check = check_ops.assert_greater_equal(
            dims[-2], dims[-1], message=f"The gradient of qr ({op.name}) is defined for "
            "matrices with num_rows >= num_cols")
        r = control_flow_ops.with_dependencies([check], r)
    grad_q = array_ops.zeros_like(q) if grad_q is None else grad_q
    grad_r = array_ops.zeros_like(r) if grad_r is None else grad_r
    qdq = matmul(q, grad_q, adjoint_a=True)
    rdr = matmul(r, grad_r, adjoint_b=True)
    lower = band_part(qdq - adjoint(qdq) + rdr - adjoint(rdr), -1, 0)
    grad_a = matmul(q, grad_r + _right_triangular_solve(lower, r))
    return [grad_a + _right_triangular_solve(grad_q - matmul(q, qdq), r)]


def _svd_shape(op):
    dims = _dims(op.inputs[0].shape)
    if dims is None:
        return [TensorShape(None)] * 3
    if len(dims) < 2:
        raise ValueError(f"svd needs a matrix (rank >= 2), got shape {op.inputs[0].shape}")
    *batch, rows, cols = dims
    k = None if rows is None or cols is None else min(rows, cols)
    if not op.get_attr("compute_uv"):
        return [TensorShape(batch + [k]), TensorShape(batch + [0]), TensorShape(batch + [0])]
    if op.get_attr("full_matrices"):
        return [TensorShape(batch + [k]), TensorShape(batch + [rows, rows]),
                TensorShape(batch + [cols, cols])]
    return [TensorShape(batch + [k]), TensorShape(batch + [rows, k]),
            TensorShape(batch + [cols, k])]


register_op("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
            attrs={"T": "type", "compute_uv": ("bool", True), "full_matrices": ("bool", False)},
            shape_fn=_svd_shape, allowed_types={"T": _FLOATS})


def _off_diagonal_reciprocal(values, squared):
    """F[..., i, j] = 1 / (v_j - v_i) (of the squares when `squared`), 0 where v_i == v_j."""
    if squared:
        values = values * values
    differences = array_ops.expand_dims(values, -2) - array_ops.expand_dims(values, -1)
    nonzero = math_ops.not_equal(differences, array_ops.zeros_like(differences))
    safe = math_ops.select(nonzero, differences, array_ops.ones_like(differences))
    return math_ops.select(nonzero, 1.0 / safe, array_ops.zeros_like(differences))


@register_gradient("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    s = op.outputs[0]
    if not op.get_attr("compute_uv"):
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        return [matmul(u * array_ops.expand_dims(grad_s, -2), v, adjoint_b=True)]
    rows, cols = _static_rows_cols(a)
    if op.get_attr("full_matrices") and (rows is None or cols is None or rows != cols):
        raise NotImplementedError(
            f"The gradient of svd ({op.name}) with full_matrices=True is defined for square "
            f"matrices only; got shape {a.shape}")
    u, v = op.outputs[1], op.outputs[2]
    grad_s = array_ops.zeros_like(s) if grad_s is None else grad_s
    grad_u = array_ops.zeros_like(u) if grad_u is None else grad_u
    grad_v = array_ops.zeros_like(v) if grad_v is None else grad_v
    f = _off_diagonal_reciprocal(s, squared=True)
    s_row = array_ops.expand_dims(s, -2)      # scales columns: X S
    s_col = array_ops.expand_dims(s, -1)      # scales rows:    S X
    utgu = matmul(u, grad_u, adjoint_a=True)
    vtgv = matmul(v, grad_v, adjoint_a=True)
    inner = (f * (utgu - adjoint(utgu))) * s_row + matrix_diag(grad_s) + \
        s_col * (f * (vtgv - adjoint(vtgv)))
    grad_a = matmul(u, matmul(inner, v, adjoint_b=True))
    inverse_s = 1.0 / s_row
    # Components outside the spans of U and V (zero for square matrices).
    outside_u = grad_u - matmul(u, utgu)
    grad_a += matmul(outside_u * inverse_s, v, adjoint_b=True)
    outside_v = grad_v - matmul(v, vtgv)
    grad_a += matmul(u * inverse_s, outside_v, adjoint_b=True)
    return [grad_a]


def _eig_shape(op):
    dims = _square(op, "self_adjoint_eig")
    if dims is None:
        return [TensorShape(None)] * 2
    values = TensorShape(dims[:-1])
    if not op.get_attr("compute_v"):
        return [values, TensorShape(dims[:-2] + [0])]
    return [values, TensorShape(dims)]


register_op("SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"],
            attrs={"T": "type", "compute_v": ("bool", True)}, shape_fn=_eig_shape,
            allowed_types={"T": _FLOATS})


@register_gradient("SelfAdjointEigV2")
def _eig_grad(op, grad_e, grad_v):
    e, v = op.outputs
    if not op.get_attr("compute_v"):
        e, v = eigh(op.inputs[0])
        grad_v = None
    grad_e = array_ops.zeros_like(e) if grad_e is None else grad_e
    inner = matrix_diag(grad_e)
    if grad_v is not None:
        inner += _off_diagonal_reciprocal(e, squared=False) * matmul(v, grad_v, adjoint_a=True)
    grad_a = matmul(v, matmul(inner, v, adjoint_b=True))
    # The kernel reads only the lower triangle of its (symmetric) input.
    lower = band_part(grad_a + adjoint(grad_a), -1, 0)
    return [matrix_set_diag(lower, 0.5 * matrix_diag_part(lower))]


# --- the Python API ------------------------------------------------------------------------------
def det(input, name=None):  # noqa: A002 - TF's argument names
    return make_tensor("MatrixDeterminant", [convert_to_tensor(input)],
                       name=name or "MatrixDeterminant")


def slogdet(input, name=None):  # noqa: A002
    """(sign, log |det|) of each matrix: stable where det itself would overflow."""
    op = make_op("LogMatrixDeterminant", [convert_to_tensor(input)],
                 name=name or "LogMatrixDeterminant")
    return SlogdetResult(*op.outputs)


def logdet(matrix, name=None):
    """log det of Hermitian positive definite matrices, through their Cholesky factors."""
    factor = cholesky(matrix)
    return 2.0 * reduction_ops.reduce_sum(math_ops.log(matrix_diag_part(factor)), -1,
                                          name=name or "logdet")


def inv(input, adjoint=False, name=None):  # noqa: A002
    return make_tensor("MatrixInverse", [convert_to_tensor(input)], {"adjoint": adjoint},
                       name=name or "MatrixInverse")


def solve(matrix, rhs, adjoint=False, name=None):
    matrix, rhs = convert_pair(matrix, rhs, "matrix", "rhs")
    return make_tensor("MatrixSolve", [matrix, rhs], {"adjoint": adjoint},
                       name=name or "MatrixSolve")


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    matrix, rhs = convert_pair(matrix, rhs, "matrix", "rhs")
    return make_tensor("MatrixTriangularSolve", [matrix, rhs],
                       {"lower": lower, "adjoint": adjoint},
                       name=name or "MatrixTriangularSolve")


def cholesky(input, name=None):  # noqa: A002
    return make_tensor("Cholesky", [convert_to_tensor(input)], name=name or "Cholesky")


def cholesky_solve(chol, rhs, name=None):
    """Solves A X = rhs given chol = cholesky(A)."""
    partial = triangular_solve(chol, rhs, lower=True, adjoint=False)
    return triangular_solve(chol, partial, lower=True, adjoint=True,
                            name=name or "cholesky_solve")


def qr(input, full_matrices=False, name=None):  # noqa: A002
    op = make_op("Qr", [convert_to_tensor(input)], {"full_matrices": full_matrices},
                 name=name or "Qr")
    return QrResult(*op.outputs)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """(s, u, v) with tensor = u diag(s) v^T (s descending); s alone without compute_uv."""
    op = make_op("Svd", [convert_to_tensor(tensor)], {"compute_uv": compute_uv,
                                                      "full_matrices": full_matrices},
                 name=name or "Svd")
    return tuple(op.outputs) if compute_uv else op.outputs[0]


def eigh(tensor, name=None):
    """(eigenvalues ascending, eigenvectors as columns) of symmetric matrices."""
    op = make_op("SelfAdjointEigV2", [convert_to_tensor(tensor)], {"compute_v": True},
                 name=name or "SelfAdjointEigV2")
    return EighResult(*op.outputs)


def eigvalsh(tensor, name=None):
    op = make_op("SelfAdjointEigV2", [convert_to_tensor(tensor)], {"compute_v": False},
                 name=name or "SelfAdjointEigV2")
    return op.outputs[0]


def _default_tolerance(matrix, s, rcond):
    rows, cols = _static_rows_cols(matrix)
    eps = float(np.finfo(matrix.dtype.as_numpy_dtype).eps)
    if rcond is None:
        if rows is None or cols is None:
            size = math_ops.cast(reduction_ops.reduce_max(array_ops.shape(matrix)[-2:]),
                                 matrix.dtype)
            return size * eps * reduction_ops.reduce_max(s, -1, keepdims=True)
        rcond = 10.0 * max(rows, cols) * eps
    return float(rcond) * reduction_ops.reduce_max(s, -1, keepdims=True)


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse, dropping singular values <= rcond * max(s)."""
    a = convert_to_tensor(a)
    s, u, v = svd(a)
    cutoff = _default_tolerance(a, s, rcond)
    keep = math_ops.greater(s, cutoff)
    inverse_s = math_ops.select(keep, 1.0 / math_ops.select(keep, s, array_ops.ones_like(s)),
                                array_ops.zeros_like(s))
    return matmul(v * array_ops.expand_dims(inverse_s, -2), u, adjoint_b=True,
                  name=name or "pinv")


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above `tol` (default: eps * max(M, N) * max(s))."""
    a = convert_to_tensor(a)
    s = svd(a, compute_uv=False)
    if tol is None:
        rows, cols = _static_rows_cols(a)
        eps = float(np.finfo(a.dtype.as_numpy_dtype).eps)
        if rows is not None and cols is not None:
            tol = max(rows, cols) * eps * reduction_ops.reduce_max(s, -1, keepdims=True)
        else:
            tol = _default_tolerance(a, s, None)
    return reduction_ops.reduce_sum(math_ops.cast(math_ops.greater(s, tol), dtypes.int64), -1,
                                    name=name or "matrix_rank")


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least-squares solutions of matrix X = rhs (with an L2 penalty). fast=True solves the
    normal equations by Cholesky, as TF; fast=False uses the pseudo-inverse (no penalty)."""
    matrix, rhs = convert_pair(matrix, rhs, "matrix", "rhs")
    if not fast:
        if l2_regularizer:
            raise ValueError("lstsq: fast=False supports only l2_regularizer=0")
        return matmul(pinv(matrix), rhs, name=name or "lstsq")
    rows, cols = _static_rows_cols(matrix)
    if rows is None or cols is None:
        raise ValueError(f"lstsq(fast=True) needs matrices of known shape, got {matrix.shape}")
    penalty = math_ops.cast(l2_regularizer, matrix.dtype)
    if rows >= cols:
        gram = matmul(matrix, matrix, adjoint_a=True)
        gram += penalty * _identity_like(gram)
        return cholesky_solve(cholesky(gram), matmul(matrix, rhs, adjoint_a=True),
                              name=name or "lstsq")
    gram = matmul(matrix, matrix, adjoint_b=True)
    gram += penalty * _identity_like(gram)
    return matmul(matrix, cholesky_solve(cholesky(gram), rhs), adjoint_a=True,
                  name=name or "lstsq")


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002 - TF's names
    """(tensor / norm, norm), the norm kept with its reduced dimensions."""
    tensor = convert_to_tensor(tensor)
    magnitude = norm(tensor, ord=ord, axis=axis, keepdims=True)
    return math_ops.divide(tensor, magnitude, name=name or "normalize"), magnitude


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """TF 1.x's name for lstsq."""
    return lstsq(matrix, rhs, l2_regularizer, fast, name)


def self_adjoint_eig(tensor, name=None):
    return eigh(tensor, name)


def self_adjoint_eigvals(tensor, name=None):
    return eigvalsh(tensor, name)
