"""Diagonal LinearOperators: a diagonal, a scaled identity and the identity. They scale rows,
so matmul and solve are broadcast products and quotients."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, reduction_ops
from tensorweave.ops.linear_operator import LinearOperator
from tensorweave.ops.matrix_ops import adjoint as matrix_adjoint
from tensorweave.ops.matrix_ops import eye


class _RowScaling(LinearOperator):
    """An operator that scales the rows of its argument by `_scale(adjoint)` (broadcast)."""

    def _init_scaling(self, values, is_non_singular, is_self_adjoint, is_positive_definite,
                      name):
        """A real scaling is self-adjoint (TF rejects is_self_adjoint=False for one)."""
        if not values.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError(f"{name}: a real diagonal operator is always self-adjoint")
            is_self_adjoint = True
        LinearOperator.__init__(self, values.dtype, None, is_non_singular, is_self_adjoint,
                                is_positive_definite, True, name)

    def _matmul(self, x, adjoint, adjoint_arg):
        return self._scale(adjoint) * (matrix_adjoint(x) if adjoint_arg else x)

    def _solve(self, rhs, adjoint, adjoint_arg):
        return (matrix_adjoint(rhs) if adjoint_arg else rhs) / self._scale(adjoint)


class LinearOperatorDiag(_RowScaling):
    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name="LinearOperatorDiag"):
        self._diag = convert_to_tensor(diag, name="diag")
        if self._diag.shape.ndims is not None and self._diag.shape.ndims < 1:
            raise ValueError(f"{name}: diag needs rank >= 1, got shape {self._diag.shape}")
        if is_square is False:
            raise ValueError(f"{name}: a diagonal operator is always square")
        self._init_scaling(self._diag, is_non_singular, is_self_adjoint, is_positive_definite,
                           name)

    diag = property(lambda self: self._diag)

    def _shape(self):
        return self._diag.shape.concatenate(self._diag.shape[-1:])

    def _to_dense(self):
        from tensorweave.ops.matrix_ops import matrix_diag
        return matrix_diag(self._diag)

    def _scale(self, adjoint):
        diag = math_ops.conj(self._diag) if adjoint and self.dtype.is_complex else self._diag
        return array_ops.expand_dims(diag, -1)

    def _determinant(self):
        return reduction_ops.reduce_prod(self._diag, -1)

    def _log_abs_determinant(self):
        return reduction_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag)), -1)

    def _diag_part(self):
        return self._diag

    def cholesky(self, name="cholesky"):
        if not (self.is_self_adjoint and self.is_positive_definite):
            raise ValueError(f"{self.name}.cholesky: needs is_self_adjoint=True and "
                             "is_positive_definite=True")
        return LinearOperatorDiag(math_ops.sqrt(self._diag), is_non_singular=True,
                                  is_self_adjoint=True, is_positive_definite=True)


class LinearOperatorScaledIdentity(_RowScaling):
    """multiplier * I of size num_rows; multiplier's shape is the batch shape."""

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True,
                 name="LinearOperatorScaledIdentity"):
        self._multiplier = convert_to_tensor(multiplier, name="multiplier")
        if not isinstance(num_rows, (int, np.integer)):
            raise TypeError(f"{name}: num_rows must be a Python int here (the size is static), "
                            f"got {num_rows!r}")
        self._num_rows = int(num_rows)
        if self._num_rows < 0:
            raise ValueError(f"{name}: num_rows must be >= 0, got {num_rows}")
        self._init_scaling(self._multiplier, is_non_singular, is_self_adjoint,
                           is_positive_definite, name)

    multiplier = property(lambda self: self._multiplier)

    def _shape(self):
        return self._multiplier.shape.concatenate([self._num_rows, self._num_rows])

    def _scale(self, adjoint):
        value = math_ops.conj(self._multiplier) if adjoint and self.dtype.is_complex \
            else self._multiplier
        return array_ops.expand_dims(array_ops.expand_dims(value, -1), -1)

    def _to_dense(self):
        return self._scale(False) * eye(self._num_rows, dtype=self.dtype)

    def _determinant(self):
        return math_ops.pow(self._multiplier, math_ops.cast(self._num_rows, self.dtype))

    def _log_abs_determinant(self):
        return self._num_rows * math_ops.log(math_ops.abs(self._multiplier))

    def _diag_part(self):
        return array_ops.expand_dims(self._multiplier, -1) * array_ops.ones(
            [self._num_rows], dtype=self.dtype)


class LinearOperatorIdentity(LinearOperatorScaledIdentity):
    """I of size num_rows, optionally batched (every batch member the identity)."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        if is_non_singular is False or is_positive_definite is False:
            raise ValueError(f"{name}: the identity is non-singular and positive definite")
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        ones = array_ops.ones(list(batch_shape or []), dtype=dtype)
        super().__init__(num_rows, ones, True, True, True, True, name)
