"""LinearOperators built from other operators: adjoint, inverse, product, block diagonal, block
lower triangular and Kronecker product. Block structure needs static block sizes."""
from tensorweave.framework import tensor_shape
from tensorweave.ops import array_ops, math_ops, reduction_ops, slicing_ops
from tensorweave.ops.linalg_more_ops import kronecker
from tensorweave.ops.linear_operator import LinearOperator, _dim
from tensorweave.ops.matrix_ops import adjoint as matrix_adjoint
from tensorweave.ops.matrix_ops import eye

TensorShape = tensor_shape.TensorShape


class LinearOperatorAdjoint(LinearOperator):
    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self.operator = operator
        pick = lambda mine, theirs: theirs if mine is None else mine  # noqa: E731
        super().__init__(operator.dtype, None, pick(is_non_singular, operator.is_non_singular),
                         pick(is_self_adjoint, operator.is_self_adjoint),
                         pick(is_positive_definite, operator.is_positive_definite),
                         pick(is_square, operator.is_square), name or operator.name + "_adjoint")

    def _shape(self):
        shape = self.operator.shape
        if shape.ndims is None:
            return shape
        return shape[:-2].concatenate([shape[-1], shape[-2]])

    def _to_dense(self):
        return matrix_adjoint(self.operator.to_dense())

    def _matmul(self, x, adjoint, adjoint_arg):
        return self.operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint, adjoint_arg):
        return self.operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return math_ops.conj(self.operator.determinant())

    def _log_abs_determinant(self):
        return self.operator.log_abs_determinant()

    def _diag_part(self):
        return math_ops.conj(self.operator.diag_part())

    def adjoint(self, name="adjoint"):
        return self.operator


class LinearOperatorInversion(LinearOperator):
    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"LinearOperatorInversion: {operator.name} is declared singular")
        if operator.is_square is False:
            raise ValueError(f"LinearOperatorInversion: {operator.name} is not square")
        self.operator = operator
        pick = lambda mine, theirs: theirs if mine is None else mine  # noqa: E731
        super().__init__(operator.dtype, None, True,
                         pick(is_self_adjoint, operator.is_self_adjoint),
                         pick(is_positive_definite, operator.is_positive_definite), True,
                         name or operator.name + "_inverse")

    def _shape(self):
        return self.operator.shape

    def _to_dense(self):
        rows = _dim(self.shape, -1)
        identity = eye(rows, dtype=self.dtype) if rows is not None else eye(
            self.operator.domain_dimension_tensor(), dtype=self.dtype)
        return self.operator.solve(identity + array_ops.zeros_like(self.operator.to_dense()))

    def _matmul(self, x, adjoint, adjoint_arg):
        return self.operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint, adjoint_arg):
        return self.operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return 1.0 / self.operator.determinant()

    def _log_abs_determinant(self):
        return -self.operator.log_abs_determinant()

    def inverse(self, name="inverse"):
        return self.operator


class LinearOperatorComposition(LinearOperator):
    """operators[0] @ operators[1] @ ..."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        operators = list(operators)
        if not operators:
            raise ValueError("LinearOperatorComposition: needs at least one operator")
        if len({op.dtype for op in operators}) != 1:
            raise TypeError("LinearOperatorComposition: operators of different dtypes "
                            f"{[op.dtype.name for op in operators]}")
        for left, right in zip(operators, operators[1:]):
            inner, outer = _dim(left.shape, -1), _dim(right.shape, -2)
            if None not in (inner, outer) and inner != outer:
                raise ValueError(f"LinearOperatorComposition: {left.name} of shape {left.shape} "
                                 f"and {right.name} of shape {right.shape} do not compose")
        self.operators = operators
        super().__init__(operators[0].dtype, None,
                         _all_hold(operators, "is_non_singular", is_non_singular),
                         is_self_adjoint,
                         is_positive_definite, is_square,
                         name or "_o_".join(op.name for op in operators))

    def _shape(self):
        first, last = self.operators[0].shape, self.operators[-1].shape
        if first.ndims is None or last.ndims is None:
            return TensorShape(None)
        batch = first[:-2]
        for op in self.operators[1:]:
            batch = _broadcast_static(batch, op.batch_shape)
        return batch.concatenate([first[-2], last[-1]])

    def _to_dense(self):
        dense = self.operators[-1].to_dense()
        for op in reversed(self.operators[:-1]):
            dense = op.matmul(dense)
        return dense

    def _matmul(self, x, adjoint, adjoint_arg):
        ordered = self.operators if adjoint else list(reversed(self.operators))
        result = ordered[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in ordered[1:]:
            result = op.matmul(result, adjoint=adjoint)
        return result

    def _solve(self, rhs, adjoint, adjoint_arg):
        ordered = list(reversed(self.operators)) if adjoint else self.operators
        result = ordered[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in ordered[1:]:
            result = op.solve(result, adjoint=adjoint)
        return result

    def _determinant(self):
        if all(op.is_square for op in self.operators):
            result = self.operators[0].determinant()
            for op in self.operators[1:]:
                result = result * op.determinant()
            return result
        return super()._determinant()

    def _log_abs_determinant(self):
        if all(op.is_square for op in self.operators):
            return math_ops.add_n([op.log_abs_determinant() for op in self.operators])
        return super()._log_abs_determinant()


def _broadcast_static(a, b):
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    a, b = a.as_list(), b.as_list()
    length = max(len(a), len(b))
    a, b = [1] * (length - len(a)) + a, [1] * (length - len(b)) + b
    return TensorShape([y if x == 1 else x if y == 1 else (x if x == y else None)
                        for x, y in zip(a, b)])


def _all_hold(operators, flag, given):
    """The caller's hint, else True when every operator promises `flag`."""
    if given is not None:
        return given
    return True if all(getattr(op, flag) for op in operators) else None


def _blocks(operators, what):
    """(operators, their static row counts, their static column counts)."""
    operators = list(operators)
    if not operators:
        raise ValueError(f"{what}: needs at least one operator")
    return (operators, [_static_size(op, -2, what) for op in operators],
            [_static_size(op, -1, what) for op in operators])


def _static_size(operator, index, what):
    size = _dim(operator.shape, index)
    if size is None:
        raise ValueError(f"{what}: {operator.name} needs a static shape, got {operator.shape}")
    return size


def _assemble(rows, row_sizes, col_sizes, dtype, batch_like):
    """Dense blocks (None for zeros) -> one matrix; zero blocks take batch_like's batch shape."""
    batch = array_ops.shape(batch_like)[:-2]
    dense_rows = []
    for blocks, rows_here in zip(rows, row_sizes):
        parts = []
        for block, cols_here in zip(blocks, col_sizes):
            if block is None:
                block = array_ops.zeros(slicing_ops.concat([batch, [rows_here, cols_here]], 0),
                                        dtype=dtype)
            parts.append(block)
        dense_rows.append(slicing_ops.concat(parts, -1))
    return slicing_ops.concat(dense_rows, -2)


class LinearOperatorBlockDiag(LinearOperator):
    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=None):
        self.operators, self._rows, self._cols = _blocks(operators, "LinearOperatorBlockDiag")
        super().__init__(self.operators[0].dtype, None,
                         _all_hold(self.operators, "is_non_singular", is_non_singular),
                         _all_hold(self.operators, "is_self_adjoint", is_self_adjoint),
                         _all_hold(self.operators, "is_positive_definite",
                                   is_positive_definite), is_square,
                         name or "_".join(op.name for op in self.operators))

    def _shape(self):
        batch = self.operators[0].batch_shape
        for op in self.operators[1:]:
            batch = _broadcast_static(batch, op.batch_shape)
        return batch.concatenate([sum(self._rows), sum(self._cols)])

    def _to_dense(self):
        dense = [op.to_dense() for op in self.operators]
        rows = [[dense[i] if i == j else None for j in range(len(dense))]
                for i in range(len(dense))]
        return _assemble(rows, self._rows, self._cols, self.dtype, dense[0])

    def _blockwise(self, x, adjoint, adjoint_arg, method):
        x = matrix_adjoint(x) if adjoint_arg else x
        sizes = self._rows if adjoint != (method == "solve") else self._cols
        parts, start = [], 0
        for op, size in zip(self.operators, sizes):
            parts.append(getattr(op, method)(x[..., start:start + size, :], adjoint=adjoint))
            start += size
        return slicing_ops.concat(parts, -2)

    def _matmul(self, x, adjoint, adjoint_arg):
        return self._blockwise(x, adjoint, adjoint_arg, "matmul")

    def _solve(self, rhs, adjoint, adjoint_arg):
        return self._blockwise(rhs, adjoint, adjoint_arg, "solve")

    def _determinant(self):
        return reduction_ops.reduce_prod(slicing_ops.stack(
            [op.determinant() for op in self.operators], -1), -1)

    def _log_abs_determinant(self):
        return math_ops.add_n([op.log_abs_determinant() for op in self.operators])

    def _diag_part(self):
        return slicing_ops.concat([op.diag_part() for op in self.operators], -1)


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """operators[i] holds row i's blocks [A_i0, ..., A_ii]; A_ii square."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self.operators = [list(row) for row in operators]
        for i, row in enumerate(self.operators):
            if len(row) != i + 1:
                raise ValueError(f"LinearOperatorBlockLowerTriangular: row {i} needs {i + 1} "
                                 f"operators, got {len(row)}")
        self._sizes = [_static_size(row[-1], -1, "LinearOperatorBlockLowerTriangular")
                       for row in self.operators]
        diagonal = [row[-1] for row in self.operators]
        super().__init__(diagonal[0].dtype, None,
                         _all_hold(diagonal, "is_non_singular", is_non_singular),
                         is_self_adjoint,
                         is_positive_definite, True, name or "BlockLowerTriangular")

    def _shape(self):
        return self.operators[0][0].batch_shape.concatenate([sum(self._sizes)] * 2)

    def _to_dense(self):
        count = len(self.operators)
        rows = [[row[j].to_dense() if j < len(row) else None for j in range(count)]
                for row in self.operators]
        return _assemble(rows, self._sizes, self._sizes, self.dtype, rows[0][0])

    def _solve(self, rhs, adjoint, adjoint_arg):
        if adjoint:
            return super()._solve(rhs, adjoint, adjoint_arg)
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        solutions, start = [], 0
        for row, size in zip(self.operators, self._sizes):
            remainder = rhs[..., start:start + size, :]
            for block, known in zip(row[:-1], solutions):
                remainder = remainder - block.matmul(known)
            solutions.append(row[-1].solve(remainder))
            start += size
        return slicing_ops.concat(solutions, -2)

    def _determinant(self):
        return reduction_ops.reduce_prod(slicing_ops.stack(
            [row[-1].determinant() for row in self.operators], -1), -1)

    def _log_abs_determinant(self):
        return math_ops.add_n([row[-1].log_abs_determinant() for row in self.operators])


class LinearOperatorKronecker(LinearOperator):
    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self.operators, self._rows, self._cols = _blocks(operators, "LinearOperatorKronecker")
        super().__init__(self.operators[0].dtype, None,
                         _all_hold(self.operators, "is_non_singular", is_non_singular),
                         _all_hold(self.operators, "is_self_adjoint", is_self_adjoint),
                         _all_hold(self.operators, "is_positive_definite",
                                   is_positive_definite), is_square,
                         name or "_x_".join(op.name for op in self.operators))

    def _shape(self):
        rows, cols = 1, 1
        for r, c in zip(self._rows, self._cols):
            rows, cols = rows * r, cols * c
        return self.operators[0].batch_shape.concatenate([rows, cols])

    def _to_dense(self):
        dense = self.operators[0].to_dense()
        for op in self.operators[1:]:
            dense = kronecker(dense, op.to_dense())
        return dense

    def _determinant(self):
        # det(A kron B) = det(A)^m det(B)^n for A n x n, B m x m.
        total = self.shape.as_list()[-1]
        result = None
        for op, size in zip(self.operators, self._rows):
            factor = math_ops.pow(op.determinant(), math_ops.cast(total // size, self.dtype))
            result = factor if result is None else result * factor
        return result

    def _log_abs_determinant(self):
        total = self.shape.as_list()[-1]
        return math_ops.add_n([(total // size) * op.log_abs_determinant()
                               for op, size in zip(self.operators, self._rows)])
