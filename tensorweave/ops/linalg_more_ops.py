"""tf.linalg's LU family, matrix square root and logarithm, and tridiagonal products and solves.

Lu is a primitive (packed L\\U with partial pivoting, P A = L U); its gradient follows from
dA = P^T (dL U + L dU): with M = strict_lower(L^H gL) + upper(gU U^H), gA = P^T L^-H M U^-H.
lu_solve, lu_reconstruct and lu_matrix_inverse are compositions of triangular solves, so their
gradients come from those. MatrixSquareRoot's gradient solves the Sylvester equation
S^H X + X S^H = G (S = sqrtm(A)) through its Kronecker form, as a graph of MatrixSolve."""
import collections

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, math_ops, reduction_ops, slicing_ops
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.indexing_ops import one_hot
from tensorweave.ops.linalg_decomp_ops import solve, triangular_solve
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.matrix_ops import (adjoint, band_part, matrix_diag_part, matrix_set_diag,
                                        matrix_transpose)
from tensorweave.ops.op_util import convert_pair, make_op, make_tensor

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
_COMPLEX = (dtypes.complex64, dtypes.complex128)
TensorShape = tensor_shape.TensorShape
LuResult = collections.namedtuple("Lu", ["lu", "p"])


def _square_dims(shape, what):
    dims = None if shape.ndims is None else shape.as_list()
    if dims is not None:
        if len(dims) < 2:
            raise ValueError(f"{what} needs a matrix (rank >= 2), got shape {shape}")
        if None not in dims[-2:] and dims[-1] != dims[-2]:
            raise ValueError(f"{what} needs square matrices, got shape {shape}")
    return dims


def _lu_shape(op):
    dims = _square_dims(op.inputs[0].shape, "lu")
    if dims is None:
        return [TensorShape(None)] * 2
    return [TensorShape(dims), TensorShape(dims[:-1])]


def _same_square_shape(what):
    def shape_fn(op):
        _square_dims(op.inputs[0].shape, what)
        return [op.inputs[0].shape]
    return shape_fn


register_op("Lu", inputs=["input: T"], outputs=["lu: T", "p: output_idx_type"],
            attrs={"T": "type", "output_idx_type": ("type", dtypes.int32)}, shape_fn=_lu_shape,
            allowed_types={"T": _FLOATS + _COMPLEX,
                           "output_idx_type": (dtypes.int32, dtypes.int64)})
register_op("MatrixSquareRoot", inputs=["input: T"], outputs=["output: T"], attrs={"T": "type"},
            shape_fn=_same_square_shape("sqrtm"), allowed_types={"T": _FLOATS + _COMPLEX})
register_op("MatrixLogarithm", inputs=["input: T"], outputs=["output: T"], attrs={"T": "type"},
            shape_fn=_same_square_shape("logm"), allowed_types={"T": _COMPLEX})
# As TF: MatrixLogarithm has no gradient.
not_differentiable("MatrixLogarithm")


def _identity_like(matrices):
    return matrix_set_diag(array_ops.zeros_like(matrices),
                           array_ops.ones_like(matrix_diag_part(matrices)))


def _permutation_matrix(perm, like):
    """P with P[i, perm[i]] = 1, so that P A = A[perm]."""
    return one_hot(perm, array_ops.shape(perm)[-1], dtype=like.dtype)


def _unit_lower(packed):
    return matrix_set_diag(band_part(packed, -1, 0), array_ops.ones_like(matrix_diag_part(packed)))


@register_gradient("Lu")
def _lu_grad(op, grad_lu, _grad_p):
    if grad_lu is None:
        return [None]
    packed, perm = op.outputs
    lower, upper = _unit_lower(packed), band_part(packed, 0, -1)
    grad_lower = band_part(grad_lu, -1, 0) - band_part(grad_lu, 0, 0)
    lower_part = matmul(lower, grad_lower, adjoint_a=True)
    middle = band_part(lower_part, -1, 0) - band_part(lower_part, 0, 0)
    middle += band_part(matmul(band_part(grad_lu, 0, -1), upper, adjoint_b=True), 0, -1)
    # L^-H M U^-H: L^H is unit upper, U^H lower.
    left = triangular_solve(lower, middle, lower=True, adjoint=True)
    grad_a = adjoint(triangular_solve(upper, adjoint(left), lower=False, adjoint=False))
    return [matmul(_permutation_matrix(perm, packed), grad_a, adjoint_a=True)]


def kronecker(a, b):
    """kron over the last two dimensions: [..., i*n+k, j*n+l] = a[i, j] b[k, l]."""
    product = (array_ops.expand_dims(array_ops.expand_dims(a, -1), -3) *
               array_ops.expand_dims(array_ops.expand_dims(b, -3), -2))
    shape = array_ops.shape(product)
    batch = shape[:-4]
    size = shape[-4] * shape[-3]
    return array_ops.reshape(product, slicing_ops.concat([batch, [size, size]], 0))


def sylvester_solve(s, g):
    """X with S X + X S = G, through (S kron I + I kron S^T) vec(X) = vec(G) (row-major vec)."""
    identity = _identity_like(s)
    system = kronecker(s, identity) + kronecker(identity, matrix_transpose(s))
    shape = array_ops.shape(g)
    flat = array_ops.reshape(g, slicing_ops.concat([shape[:-2], [shape[-2] * shape[-1], 1]], 0))
    return array_ops.reshape(solve(system, flat), shape)


@register_gradient("MatrixSquareRoot")
def _sqrtm_grad(op, grad):
    return [sylvester_solve(adjoint(op.outputs[0]), grad)]


# --- the Python API ------------------------------------------------------------------------------
def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002 - TF's argument names
    """(lu, p): L (unit lower, below the diagonal) and U packed in one matrix, with
    input[p] = L U."""
    op = make_op("Lu", [convert_to_tensor(input)],
                 {"output_idx_type": dtypes.as_dtype(output_idx_type)}, name=name or "Lu")
    return LuResult(*op.outputs)


def _lu_check(lower_upper, perm, what):
    lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
    perm = convert_to_tensor(perm, name="perm")
    if not perm.dtype.is_integer:
        raise TypeError(f"{what}: perm must be int32 or int64, got {perm.dtype.name}")
    _square_dims(lower_upper.shape, what)
    return lower_upper, perm


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrix whose lu is (lower_upper, perm): P^T L U."""
    lower_upper, perm = _lu_check(lower_upper, perm, "lu_reconstruct")
    product = matmul(_unit_lower(lower_upper), band_part(lower_upper, 0, -1))
    return matmul(_permutation_matrix(perm, lower_upper), product, adjoint_a=True,
                  name=name or "lu_reconstruct")


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """X with A X = rhs given (lower_upper, perm) = lu(A)."""
    lower_upper, perm = _lu_check(lower_upper, perm, "lu_solve")
    lower_upper, rhs = convert_pair(lower_upper, rhs, "lower_upper", "rhs")
    permuted = matmul(_permutation_matrix(perm, lower_upper), rhs)
    partial = triangular_solve(_unit_lower(lower_upper), permuted, lower=True)
    return triangular_solve(lower_upper, partial, lower=False, name=name or "lu_solve")


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """inv(A) given (lower_upper, perm) = lu(A)."""
    lower_upper, perm = _lu_check(lower_upper, perm, "lu_matrix_inverse")
    return lu_solve(lower_upper, perm, _identity_like(lower_upper),
                    name=name or "lu_matrix_inverse")


def sqrtm(input, name=None):  # noqa: A002
    """The principal square root of each matrix (real input needs a real principal root)."""
    return make_tensor("MatrixSquareRoot", [convert_to_tensor(input)],
                       name=name or "MatrixSquareRoot")


def logm(input, name=None):  # noqa: A002
    """The principal logarithm of complex matrices (TF accepts complex64/complex128 only)."""
    input = convert_to_tensor(input)  # noqa: A001
    if not input.dtype.is_complex:
        raise TypeError(f"logm needs complex64 or complex128 input, got {input.dtype.name}; "
                        "cast with tf.cast(x, tf.complex128)")
    return make_tensor("MatrixLogarithm", [input], name=name or "MatrixLogarithm")


# --- tridiagonal products and solves -------------------------------------------------------------
def _shift_up(x):
    """rows moved up one (x[i+1] at i, zeros last), along the second-to-last dimension."""
    return slicing_ops.concat([x[..., 1:, :], array_ops.zeros_like(x[..., :1, :])], -2)


def _shift_down(x):
    return slicing_ops.concat([array_ops.zeros_like(x[..., :1, :]), x[..., :-1, :]], -2)


def _as_column(diagonal):
    return array_ops.expand_dims(diagonal, -1)


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The tridiagonal matrix times rhs [..., M, N]; diagonals as tridiagonal_solve takes them."""
    superdiag, maindiag, subdiag = _diagonals(diagonals, diagonals_format, "tridiagonal_matmul")
    rhs = convert_to_tensor(rhs, dtype=maindiag.dtype, name="rhs")
    product = (_as_column(maindiag) * rhs + _as_column(superdiag) * _shift_up(rhs) +
               _as_column(subdiag) * _shift_down(rhs))
    return array_ops.identity(product, name=name or "tridiagonal_matmul")


def _diagonals(diagonals, diagonals_format, what):
    """(super, main, sub) as [..., M] tensors. super's last and sub's first entry are unused."""
    if diagonals_format == "compact":
        diagonals = convert_to_tensor(diagonals, name="diagonals")
        if diagonals.shape.ndims is not None and (
                diagonals.shape.ndims < 2 or diagonals.shape.as_list()[-2] not in (None, 3)):
            raise ValueError(f"{what}: compact diagonals need shape [..., 3, M], got "
                             f"{diagonals.shape}")
        return diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise ValueError(f"{what}: diagonals_format='sequence' needs (superdiag, maindiag, "
                             "subdiag)")
        main = convert_to_tensor(diagonals[1], name="maindiag")
        return (convert_to_tensor(diagonals[0], dtype=main.dtype, name="superdiag"), main,
                convert_to_tensor(diagonals[2], dtype=main.dtype, name="subdiag"))
    if diagonals_format == "matrix":
        matrix = convert_to_tensor(diagonals, name="diagonals")
        _square_dims(matrix.shape, what)
        zero = array_ops.zeros_like(matrix[..., :1, 0])
        superdiag = slicing_ops.concat([matrix_diag_part(matrix[..., :-1, 1:]), zero], -1)
        subdiag = slicing_ops.concat([zero, matrix_diag_part(matrix[..., 1:, :-1])], -1)
        return superdiag, matrix_diag_part(matrix), subdiag
    raise ValueError(f"{what}: diagonals_format must be 'compact', 'sequence' or 'matrix', got "
                     f"{diagonals_format!r}")


def _tridiagonal_solve_shape(op):
    diagonals, rhs = op.inputs[0].shape, op.inputs[1].shape
    if diagonals.ndims is not None and diagonals.ndims < 2:
        raise ValueError(f"tridiagonal_solve: diagonals need shape [..., 3, M], got {diagonals}")
    if rhs.ndims is not None and rhs.ndims < 2:
        raise ValueError(f"tridiagonal_solve: rhs needs rank >= 2, got {rhs}")
    if diagonals.ndims is not None and rhs.ndims is not None:
        size, rows = diagonals.as_list()[-1], rhs.as_list()[-2]
        if None not in (size, rows) and size != rows:
            raise ValueError(f"tridiagonal_solve: diagonals of shape {diagonals} and rhs of "
                             f"shape {rhs} do not match")
    return [rhs]


register_op("TridiagonalSolve", inputs=["diagonals: T", "rhs: T"], outputs=["output: T"],
            attrs={"T": "type", "partial_pivoting": ("bool", True),
                   "perturb_singular": ("bool", False)},
            shape_fn=_tridiagonal_solve_shape, allowed_types={"T": _FLOATS + _COMPLEX})


def _transposed_compact(diagonals):
    """The compact diagonals of the transposed matrix: super' = sub shifted left, sub' =
    super shifted right."""
    superdiag, maindiag, subdiag = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    zero = array_ops.zeros_like(maindiag[..., :1])
    return slicing_ops.stack([slicing_ops.concat([subdiag[..., 1:], zero], -1), maindiag,
                              slicing_ops.concat([zero, superdiag[..., :-1]], -1)], -2)


@register_gradient("TridiagonalSolve")
def _tridiagonal_solve_grad(op, grad):
    diagonals, solution = op.inputs[0], op.outputs[0]
    adjoint_diagonals = _transposed_compact(diagonals)
    if diagonals.dtype.is_complex:
        adjoint_diagonals, solution = math_ops.conj(adjoint_diagonals), math_ops.conj(solution)
    grad_rhs = make_tensor("TridiagonalSolve", [adjoint_diagonals, grad],
                           {"partial_pivoting": op.get_attr("partial_pivoting"),
                            "perturb_singular": op.get_attr("perturb_singular")})
    # dA = -grad_rhs x^H restricted to the three diagonals.
    grad_main = -reduction_ops.reduce_sum(grad_rhs * solution, -1)
    grad_super = -reduction_ops.reduce_sum(grad_rhs * _shift_up(solution), -1)
    grad_sub = -reduction_ops.reduce_sum(grad_rhs * _shift_down(solution), -1)
    return [slicing_ops.stack([grad_super, grad_main, grad_sub], -2), grad_rhs]


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False):
    """Solves A X = rhs for tridiagonal A given as 'compact' [..., 3, M] (super, main, sub),
    'sequence' (three [..., M]) or 'matrix' [..., M, M]. rhs is [..., M, K], or [..., M] (one
    right-hand side, result [..., M]); transpose_rhs takes rhs as [..., K, M]."""
    if perturb_singular:
        raise NotImplementedError("tridiagonal_solve: perturb_singular=True is not supported; "
                                  "regularise the matrix instead")
    superdiag, maindiag, subdiag = _diagonals(diagonals, diagonals_format, "tridiagonal_solve")
    compact = slicing_ops.stack([superdiag, maindiag, subdiag], -2)
    rhs = convert_to_tensor(rhs, dtype=maindiag.dtype, name="rhs")
    vector = rhs.shape.ndims is not None and maindiag.shape.ndims is not None and \
        rhs.shape.ndims == maindiag.shape.ndims
    if vector:
        rhs = array_ops.expand_dims(rhs, -1)
    elif transpose_rhs:
        rhs = matrix_transpose(rhs)
    if conjugate_rhs:
        rhs = math_ops.conj(rhs)
    solution = make_tensor("TridiagonalSolve", [compact, rhs],
                           {"partial_pivoting": partial_pivoting, "perturb_singular": False},
                           name=name or "TridiagonalSolve")
    return array_ops.squeeze(solution, -1) if vector else solution
