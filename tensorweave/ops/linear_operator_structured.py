"""Structured LinearOperators: Toeplitz, circulant (1-D, 2-D and 3-D, applied through the FFT
ops), Householder reflections, permutations, tridiagonal matrices, low-rank updates (Woodbury
solve, determinant lemma) and the zero operator."""
import numpy as np

from tensorweave.framework import dtypes, tensor_shape
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import (array_ops, check_ops, math_ops, reduction_ops, slicing_ops,
                             spectral_ops)
from tensorweave.ops.indexing_ops import one_hot
from tensorweave.ops.linalg_more_ops import (_diagonals, _transposed_compact, tridiagonal_matmul,
                                             tridiagonal_solve)
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.linear_operator import LinearOperator, _dim
from tensorweave.ops.math_compose_ops import imag, real
from tensorweave.ops.matrix_ops import adjoint as matrix_adjoint
from tensorweave.ops.matrix_ops import eye, matrix_transpose
from tensorweave.ops.pad_tile_ops import reverse


def _static_last(tensor, what):
    size = _dim(tensor.shape, -1)
    if size is None:
        raise ValueError(f"{what}: needs a static last dimension, got shape {tensor.shape}")
    return size


class LinearOperatorToeplitz(LinearOperator):
    """T[i, j] = col[i - j] for i >= j, row[j - i] above the diagonal (row[0] is unused)."""

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name="LinearOperatorToeplitz"):
        self.col = convert_to_tensor(col, name="col")
        self.row = convert_to_tensor(row, dtype=self.col.dtype, name="row")
        self._n = _static_last(self.col, name)
        if _dim(self.row.shape, -1) not in (None, self._n):
            raise ValueError(f"{name}: col and row lengths differ: {self.col.shape} vs "
                             f"{self.row.shape}")
        super().__init__(self.col.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name)

    def _shape(self):
        return self.col.shape.concatenate([self._n])

    def _to_dense(self):
        n = self._n
        values = slicing_ops.concat([reverse(self.row[..., 1:], [-1]), self.col], -1)
        selection = np.zeros((2 * n - 1, n * n))
        for i in range(n):
            for j in range(n):
                selection[n - 1 + i - j, i * n + j] = 1
        flat = matmul(array_ops.expand_dims(values, -2), constant(selection, dtype=self.dtype))
        shape = array_ops.shape(values)
        return array_ops.reshape(flat, slicing_ops.concat([shape[:-1], [n, n]], 0))


_TRANSFORMS = {1: (spectral_ops.fft, spectral_ops.ifft), 2: (spectral_ops.fft2d,
                                                              spectral_ops.ifft2d),
               3: (spectral_ops.fft3d, spectral_ops.ifft3d)}


class _BaseCirculant(LinearOperator):
    """F^H diag(spectrum) F with F the (block_depth)-D DFT over the trailing spectrum axes."""

    block_depth = 1

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True, name=None):
        spectrum = convert_to_tensor(spectrum, name="spectrum")
        complex_dtype = dtypes.complex128 if spectrum.dtype in (
            dtypes.float64, dtypes.complex128) else dtypes.complex64
        self.spectrum = math_ops.cast(spectrum, complex_dtype)
        dims = None if spectrum.shape.ndims is None else spectrum.shape.as_list()
        if dims is None or len(dims) < self.block_depth or None in dims[-self.block_depth:]:
            raise ValueError(f"{name}: spectrum needs static trailing {self.block_depth} "
                             f"dimension(s), got shape {spectrum.shape}")
        self._block_shape = dims[-self.block_depth:]
        self._size = int(np.prod(self._block_shape))
        super().__init__(input_output_dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name or type(self).__name__)

    def _shape(self):
        return self.spectrum.shape[:-self.block_depth].concatenate([self._size, self._size])

    @property
    def block_shape(self):
        return tensor_shape.TensorShape(self._block_shape)

    def block_shape_tensor(self):
        return convert_to_tensor(self._block_shape, dtype=dtypes.int32)

    def convolution_kernel(self, name="convolution_kernel"):
        """The kernel the operator convolves with (circularly): the inverse DFT of the
        spectrum, real when the operator's dtype is."""
        kernel = _TRANSFORMS[self.block_depth][1](self.spectrum)
        return kernel if self.dtype.is_complex else math_ops.cast(real(kernel), self.dtype)

    def assert_hermitian_spectrum(self, name="assert_hermitian_spectrum"):
        """Fails at run time unless the spectrum is Hermitian (the operator then maps reals
        to reals)."""
        kernel = _TRANSFORMS[self.block_depth][1](self.spectrum)
        imaginary = math_ops.abs(imag(kernel))
        eps = float(np.finfo(self.spectrum.dtype.real_dtype.np_dtype).eps)
        limit = 100 * eps * (1 + reduction_ops.reduce_max(math_ops.abs(kernel)))
        return check_ops.assert_less_equal(reduction_ops.reduce_max(imaginary), limit,
                                           message=f"{self.name}: the spectrum is not "
                                           "Hermitian", name=name)

    def _apply(self, x, spectrum_factor):
        forward, inverse = _TRANSFORMS[self.block_depth]
        columns = matrix_transpose(math_ops.cast(x, self.spectrum.dtype))  # [..., K, N]
        shape = array_ops.shape(columns)
        blocks = array_ops.reshape(columns, slicing_ops.concat([shape[:-1], self._block_shape],
                                                               0))
        factor = array_ops.expand_dims(spectrum_factor, -self.block_depth - 1)
        result = array_ops.reshape(inverse(forward(blocks) * factor), shape)
        result = matrix_transpose(result)
        return result if self.dtype.is_complex else math_ops.cast(real(result), self.dtype)

    def _matmul(self, x, adjoint, adjoint_arg):
        x = matrix_adjoint(x) if adjoint_arg else x
        return self._apply(x, math_ops.conj(self.spectrum) if adjoint else self.spectrum)

    def _solve(self, rhs, adjoint, adjoint_arg):
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        factor = math_ops.conj(self.spectrum) if adjoint else self.spectrum
        return self._apply(rhs, 1.0 / factor)

    def _to_dense(self):
        identity = eye(self._size, dtype=self.dtype)
        batch = array_ops.shape(self.spectrum)[:-self.block_depth]
        identity = identity + array_ops.zeros(slicing_ops.concat(
            [batch, [self._size, self._size]], 0), dtype=self.dtype)
        return self._matmul(identity, False, False)

    def _reduce_spectrum(self, values, reducer):
        axes = list(range(-self.block_depth, 0))
        return reducer(values, axes)

    def _determinant(self):
        value = self._reduce_spectrum(self.spectrum, reduction_ops.reduce_prod)
        return value if self.dtype.is_complex else math_ops.cast(real(value), self.dtype)

    def _log_abs_determinant(self):
        value = self._reduce_spectrum(math_ops.log(math_ops.abs(self.spectrum)),
                                      reduction_ops.reduce_sum)
        return math_ops.cast(value, self.dtype)


class LinearOperatorCirculant(_BaseCirculant):
    block_depth = 1


class LinearOperatorCirculant2D(_BaseCirculant):
    block_depth = 2


class LinearOperatorCirculant3D(_BaseCirculant):
    block_depth = 3


class LinearOperatorHouseholder(LinearOperator):
    """I - 2 v v^H / (v^H v): a reflection, self-adjoint, its own inverse, determinant -1."""

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorHouseholder"):
        self.reflection_axis = convert_to_tensor(reflection_axis, name="reflection_axis")
        if is_self_adjoint is False or is_non_singular is False:
            raise ValueError(f"{name}: a reflection is self-adjoint and non-singular")
        if is_positive_definite:
            raise ValueError(f"{name}: a reflection is not positive definite")
        super().__init__(self.reflection_axis.dtype, None, True, True, False, True, name)

    def _shape(self):
        return self.reflection_axis.shape.concatenate(self.reflection_axis.shape[-1:])

    def _matmul(self, x, adjoint, adjoint_arg):
        x = matrix_adjoint(x) if adjoint_arg else x
        axis = array_ops.expand_dims(self.reflection_axis, -1)
        norm_squared = reduction_ops.reduce_sum(math_ops.conj(axis) * axis, [-2, -1],
                                                keepdims=True)
        return x - 2.0 * axis * matmul(axis, x, adjoint_a=True) / norm_squared

    def _solve(self, rhs, adjoint, adjoint_arg):
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _to_dense(self):
        n = _dim(self.shape, -1)
        identity = eye(n if n is not None else array_ops.shape(self.reflection_axis)[-1],
                       dtype=self.dtype)
        return self._matmul(identity + array_ops.zeros_like(
            array_ops.expand_dims(self.reflection_axis, -1) * identity), False, False)

    def _determinant(self):
        return -array_ops.ones_like(self.reflection_axis[..., 0])

    def _log_abs_determinant(self):
        return array_ops.zeros_like(math_ops.abs(self.reflection_axis[..., 0]))


class LinearOperatorPermutation(LinearOperator):
    """P with (P x)[i] = x[perm[i]]: orthogonal, so solve is the transpose."""

    def __init__(self, perm, dtype=dtypes.float32, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorPermutation"):
        self.perm = convert_to_tensor(perm, name="perm")
        if not self.perm.dtype.is_integer:
            raise TypeError(f"{name}: perm must be an integer tensor, got {self.perm.dtype.name}")
        if is_non_singular is False:
            raise ValueError(f"{name}: a permutation is non-singular")
        super().__init__(dtype, None, True, is_self_adjoint, is_positive_definite, True, name)

    def _shape(self):
        return self.perm.shape.concatenate(self.perm.shape[-1:])

    def _to_dense(self):
        return one_hot(self.perm, array_ops.shape(self.perm)[-1], dtype=self.dtype)

    def _solve(self, rhs, adjoint, adjoint_arg):
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return matmul(self.to_dense(), rhs, adjoint_a=not adjoint)


class LinearOperatorTridiag(LinearOperator):
    def __init__(self, diagonals, diagonals_format="compact", is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorTridiag"):
        self.diagonals = diagonals
        self.diagonals_format = diagonals_format
        parts = _diagonals(diagonals, diagonals_format, name)
        self._compact = slicing_ops.stack(list(parts), -2)
        self._n = _dim(parts[1].shape, -1)
        super().__init__(parts[1].dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name)

    def _shape(self):
        main = self._compact.shape
        return main[:-2].concatenate([self._n, self._n]) if main.ndims is not None else main

    def _oriented(self, adjoint):
        if not adjoint:
            return self._compact
        transposed = _transposed_compact(self._compact)
        return math_ops.conj(transposed) if self.dtype.is_complex else transposed

    def _matmul(self, x, adjoint, adjoint_arg):
        x = matrix_adjoint(x) if adjoint_arg else x
        return tridiagonal_matmul(self._oriented(adjoint), x)

    def _solve(self, rhs, adjoint, adjoint_arg):
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return tridiagonal_solve(self._oriented(adjoint), rhs)

    def _to_dense(self):
        n = self._n if self._n is not None else array_ops.shape(self._compact)[-1]
        return tridiagonal_matmul(self._compact, eye(n, dtype=self.dtype) + array_ops.zeros_like(
            array_ops.expand_dims(self._compact[..., 1, :], -1)))

    def _diag_part(self):
        return self._compact[..., 1, :]


class LinearOperatorLowRankUpdate(LinearOperator):
    """base_operator + u diag(diag_update) v^H (v defaults to u, diag_update to ones)."""

    def __init__(self, base_operator, u, diag_update=None, v=None, is_diag_update_positive=None,
                 is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorLowRankUpdate"):
        self.base_operator = base_operator
        self.u = convert_to_tensor(u, dtype=base_operator.dtype, name="u")
        self.v = self.u if v is None else convert_to_tensor(v, dtype=base_operator.dtype,
                                                            name="v")
        self.diag_update = None if diag_update is None else convert_to_tensor(
            diag_update, dtype=base_operator.dtype, name="diag_update")
        symmetric_update = v is None and (is_diag_update_positive or diag_update is None)
        if is_self_adjoint is None and base_operator.is_self_adjoint and symmetric_update:
            is_self_adjoint = True
        # A positive definite base plus U D U^H with D > 0 stays positive definite.
        if is_positive_definite is None and base_operator.is_positive_definite and \
                symmetric_update:
            is_positive_definite = True
        self.is_diag_update_positive = is_diag_update_positive
        super().__init__(base_operator.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)

    def _shape(self):
        return self.base_operator.shape

    def _scaled(self, x):
        return x if self.diag_update is None else array_ops.expand_dims(self.diag_update, -1) * x

    def _to_dense(self):
        update = matmul(self.u, self._scaled(matrix_adjoint(self.v)))
        return self.base_operator.to_dense() + update

    def _matmul(self, x, adjoint, adjoint_arg):
        x = matrix_adjoint(x) if adjoint_arg else x
        left, right = (self.v, self.u) if adjoint else (self.u, self.v)
        inner = matmul(right, x, adjoint_a=True)
        inner = inner if self.diag_update is None else array_ops.expand_dims(
            math_ops.conj(self.diag_update) if adjoint else self.diag_update, -1) * inner
        return self.base_operator.matmul(x, adjoint=adjoint) + matmul(left, inner)

    def _capacitance(self):
        """C = D^-1 + V^H L^-1 U (rank x rank)."""
        solved = self.base_operator.solve(self.u)
        product = matmul(self.v, solved, adjoint_a=True)
        if self.diag_update is None:
            return product + eye(_dim(self.u.shape, -1), dtype=self.dtype), solved
        from tensorweave.ops.matrix_ops import matrix_diag
        return product + matrix_diag(1.0 / self.diag_update), solved

    def _solve(self, rhs, adjoint, adjoint_arg):
        if adjoint:
            return super()._solve(rhs, adjoint, adjoint_arg)
        from tensorweave.ops.linalg_decomp_ops import solve
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        base_solved = self.base_operator.solve(rhs)
        capacitance, solved_u = self._capacitance()
        correction = solve(capacitance, matmul(self.v, base_solved, adjoint_a=True))
        return base_solved - matmul(solved_u, correction)

    def _log_abs_determinant(self):
        from tensorweave.ops.linalg_decomp_ops import slogdet
        capacitance, _ = self._capacitance()
        result = self.base_operator.log_abs_determinant() + slogdet(capacitance)[1]
        if self.diag_update is not None:
            result += reduction_ops.reduce_sum(math_ops.log(math_ops.abs(self.diag_update)), -1)
        return result


class LinearOperatorZeros(LinearOperator):
    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular=False, is_self_adjoint=True, is_positive_definite=False,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorZeros"):
        if is_non_singular or is_positive_definite:
            raise ValueError(f"{name}: the zero operator is singular and not positive definite")
        self._num_rows = int(num_rows)
        self._num_columns = self._num_rows if num_columns is None else int(num_columns)
        self._batch = list(batch_shape or [])
        square = self._num_rows == self._num_columns
        super().__init__(dtypes.as_dtype(dtype or dtypes.float32), None, False,
                         is_self_adjoint if square else False, False, square, name)

    def _shape(self):
        return self._batch + [self._num_rows, self._num_columns]

    def _to_dense(self):
        return array_ops.zeros(self._shape(), dtype=self.dtype)

    def _determinant(self):
        return array_ops.zeros(self._batch, dtype=self.dtype)

    def _log_abs_determinant(self):
        return math_ops.log(self._determinant())

    def add_to_tensor(self, x, name="add_to_tensor"):
        return convert_to_tensor(x, dtype=self.dtype) + self._to_dense()
