"""tf.linalg.LinearOperator: a matrix (batch) known by what it does rather than its entries.

Every method builds graph ops. The base class computes each operation from `_to_dense()`;
subclasses override what their structure makes cheaper (a diagonal solve, a Woodbury solve).
Hints (is_non_singular, is_self_adjoint, is_positive_definite, is_square) are promises the
caller makes: they are checked for consistency, and an operation they rule out (solving with a
singular operator, the determinant of a non-square one) raises naming the operator."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, check_ops, math_ops, reduction_ops
from tensorweave.ops.linalg_decomp_ops import cholesky, det, eigvalsh, slogdet, solve, svd
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.matrix_ops import adjoint as matrix_adjoint
from tensorweave.ops.matrix_ops import eye, matrix_diag_part

TensorShape = tensor_shape.TensorShape


def _dim(shape, index):
    dims = None if shape.ndims is None else shape.as_list()
    return None if dims is None else dims[index]


class LinearOperator:
    """The interface and the dense-backed defaults; subclasses give `_shape` and `_to_dense`."""

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError(f"{name}: a positive definite operator is always non-singular; "
                                 "is_non_singular=False contradicts is_positive_definite=True")
            is_non_singular = True
        if is_non_singular and is_square is False:
            raise ValueError(f"{name}: a non-singular operator is square; is_square=False "
                             "contradicts is_non_singular=True")
        if is_self_adjoint and is_square is False:
            raise ValueError(f"{name}: a self-adjoint operator is square; is_square=False "
                             "contradicts is_self_adjoint=True")
        self._dtype = dtypes.as_dtype(dtype)
        self._is_non_singular, self._is_self_adjoint = is_non_singular, is_self_adjoint
        self._is_positive_definite, self._is_square_hint = is_positive_definite, is_square
        self._name = name or type(self).__name__
        if is_square is False or is_square is None:
            return
        rows, cols = _dim(self.shape, -2), _dim(self.shape, -1)
        if None not in (rows, cols) and rows != cols:
            raise ValueError(f"{self._name}: is_square=True but the shape is {self.shape}")

    # --- properties ---
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)
    is_non_singular = property(lambda self: self._is_non_singular)
    is_self_adjoint = property(lambda self: self._is_self_adjoint)
    is_positive_definite = property(lambda self: self._is_positive_definite)

    @property
    def is_square(self):
        rows, cols = _dim(self.shape, -2), _dim(self.shape, -1)
        if None not in (rows, cols):
            return rows == cols
        return self._is_square_hint

    @property
    def shape(self):
        return TensorShape(self._shape())

    def shape_tensor(self, name="shape_tensor"):
        if self.shape.is_fully_defined():
            return convert_to_tensor(self.shape.as_list(), dtype=dtypes.int32, name=name)
        return self._shape_tensor()

    def _shape_tensor(self):
        if type(self)._to_dense is LinearOperator._to_dense:
            raise NotImplementedError(f"{self.name}: the shape is not fully static; a subclass "
                                      "gives _shape_tensor() (or _to_dense())")
        return array_ops.shape(self.to_dense())

    @property
    def batch_shape(self):
        return self.shape[:-2]

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        return self.shape_tensor()[:-2]

    @property
    def tensor_rank(self):
        return self.shape.ndims

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        return array_ops.size(self.shape_tensor(), name=name)

    @property
    def range_dimension(self):
        return self.shape[-2] if self.shape.ndims is not None else tensor_shape.Dimension(None)

    @property
    def domain_dimension(self):
        return self.shape[-1] if self.shape.ndims is not None else tensor_shape.Dimension(None)

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        return self.shape_tensor()[-2]

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        return self.shape_tensor()[-1]

    # --- checks ---
    def _need_square(self, what):
        if self.is_square is False:
            raise NotImplementedError(f"{self.name}.{what}: defined for square operators only; "
                                      f"this one has shape {self.shape}")

    def _need_non_singular(self, what):
        self._need_square(what)
        if self.is_non_singular is False:
            raise NotImplementedError(f"{self.name}.{what}: the operator is declared singular "
                                      "(is_non_singular=False); there is no exact solve")

    def _as_argument(self, x, name="x"):
        if isinstance(x, LinearOperator):
            return x
        return convert_to_tensor(x, dtype=self.dtype, name=name)

    # --- operations ---
    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        x = self._as_argument(x)
        if isinstance(x, LinearOperator):
            from tensorweave.ops.linear_operator_compose import (LinearOperatorAdjoint,
                                                                 LinearOperatorComposition)
            left = LinearOperatorAdjoint(self) if adjoint else self
            right = LinearOperatorAdjoint(x) if adjoint_arg else x
            return LinearOperatorComposition([left, right])
        return self._matmul(x, adjoint, adjoint_arg)

    def __matmul__(self, other):
        return self.matmul(other)

    def _matmul(self, x, adjoint, adjoint_arg):
        return matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def matvec(self, x, adjoint=False, name="matvec"):
        x = self._as_argument(x)
        return array_ops.squeeze(self._matmul(array_ops.expand_dims(x, -1), adjoint, False), -1)

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        self._need_non_singular("solve")
        rhs = self._as_argument(rhs, "rhs")
        if isinstance(rhs, LinearOperator):
            left = self.inverse() if not adjoint else self.adjoint().inverse()
            return left.matmul(rhs, adjoint_arg=adjoint_arg)
        return self._solve(rhs, adjoint, adjoint_arg)

    def _solve(self, rhs, adjoint, adjoint_arg):
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return solve(self.to_dense(), rhs, adjoint=adjoint)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        self._need_non_singular("solvevec")
        rhs = self._as_argument(rhs, "rhs")
        return array_ops.squeeze(self._solve(array_ops.expand_dims(rhs, -1), adjoint, False), -1)

    def determinant(self, name="det"):
        self._need_square("determinant")
        return self._determinant()

    def _determinant(self):
        return det(self.to_dense())

    def log_abs_determinant(self, name="log_abs_det"):
        self._need_square("log_abs_determinant")
        return self._log_abs_determinant()

    def _log_abs_determinant(self):
        return slogdet(self.to_dense())[1]

    def diag_part(self, name="diag_part"):
        return self._diag_part()

    def _diag_part(self):
        return matrix_diag_part(self.to_dense())

    def trace(self, name="trace"):
        return reduction_ops.reduce_sum(self.diag_part(), -1, name=name)

    def to_dense(self, name="to_dense"):
        return self._to_dense()

    def _to_dense(self):
        """For a subclass that gives only _shape, _shape_tensor and _matmul (TF's minimal
        subclass): the operator applied to the identity."""
        if type(self)._matmul is LinearOperator._matmul:
            raise NotImplementedError(f"{type(self).__name__} must implement _to_dense() or "
                                      "_matmul()")
        shape = self.shape_tensor()
        identity = eye(shape[-1], batch_shape=shape[:-2], dtype=self.dtype)
        return self._matmul(identity, False, False)

    def eigvals(self, name="eigvals"):
        """The eigenvalues (ascending) of a self-adjoint operator, as TF requires."""
        if not self.is_self_adjoint:
            raise NotImplementedError(f"{self.name}.eigvals: only self-adjoint operators are "
                                      "supported; construct it with is_self_adjoint=True")
        return eigvalsh(self.to_dense(), name=name)

    def cond(self, name="cond"):
        """The 2-norm condition number: largest over smallest singular value."""
        singular_values = svd(self.to_dense(), compute_uv=False)
        return math_ops.divide(reduction_ops.reduce_max(singular_values, -1),
                               reduction_ops.reduce_min(singular_values, -1), name=name)

    def assert_non_singular(self, name="assert_non_singular"):
        """Fails at run time when the condition number reaches 1 / (max(100, M N) eps), TF's
        threshold."""
        eps = float(np.finfo(self.dtype.real_dtype.np_dtype).eps)
        size = (_dim(self.shape, -2) or 1) * (_dim(self.shape, -1) or 1)
        return check_ops.assert_less(self.cond(), math_ops.cast(1.0 / (max(100, size) * eps),
                                                                self.dtype.real_dtype),
                                     message=f"{self.name} is singular", name=name)

    def assert_positive_definite(self, name="assert_positive_definite"):
        """Fails at run time unless every eigenvalue of the self-adjoint part is positive."""
        dense = self.to_dense()
        symmetric = (dense + matrix_adjoint(dense)) * 0.5
        return check_ops.assert_positive(eigvalsh(symmetric),
                                         message=f"{self.name} is not positive definite",
                                         name=name)

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        dense = self.to_dense()
        return check_ops.assert_equal(dense, matrix_adjoint(dense),
                                      message=f"{self.name} is not self-adjoint", name=name)

    def add_to_tensor(self, x, name="add_to_tensor"):
        return self.to_dense() + convert_to_tensor(x, dtype=self.dtype, name="x")

    def adjoint(self, name="adjoint"):
        if self.is_self_adjoint:
            return self
        from tensorweave.ops.linear_operator_compose import LinearOperatorAdjoint
        return LinearOperatorAdjoint(self)

    H = property(lambda self: self.adjoint())

    def inverse(self, name="inverse"):
        self._need_square("inverse")
        if self.is_non_singular is False:
            raise ValueError(f"{self.name}.inverse: the operator is declared singular "
                             "(is_non_singular=False)")
        from tensorweave.ops.linear_operator_compose import LinearOperatorInversion
        return LinearOperatorInversion(self)

    def cholesky(self, name="cholesky"):
        if not (self.is_self_adjoint and self.is_positive_definite):
            raise ValueError(f"{self.name}.cholesky: needs is_self_adjoint=True and "
                             "is_positive_definite=True")
        return LinearOperatorLowerTriangular(cholesky(self.to_dense()), is_non_singular=True,
                                             is_square=True)


class LinearOperatorFullMatrix(LinearOperator):
    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorFullMatrix"):
        self._matrix = convert_to_tensor(matrix, name="matrix")
        if self._matrix.shape.ndims is not None and self._matrix.shape.ndims < 2:
            raise ValueError(f"{name}: matrix needs rank >= 2, got shape {self._matrix.shape}")
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)

    def _shape(self):
        return self._matrix.shape

    def _to_dense(self):
        return self._matrix


class LinearOperatorLowerTriangular(LinearOperatorFullMatrix):
    """Uses only the lower triangle of `tril`."""

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        from tensorweave.ops.matrix_ops import band_part
        tril = convert_to_tensor(tril, name="tril")
        super().__init__(band_part(tril, -1, 0), is_non_singular, is_self_adjoint,
                         is_positive_definite, True if is_square is None else is_square, name)

    def _solve(self, rhs, adjoint, adjoint_arg):
        from tensorweave.ops.linalg_decomp_ops import triangular_solve
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return triangular_solve(self._matrix, rhs, lower=True, adjoint=adjoint)

    def _determinant(self):
        return reduction_ops.reduce_prod(self._diag_part(), -1)

    def _log_abs_determinant(self):
        return reduction_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag_part())), -1)
