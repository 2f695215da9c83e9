"""Static shapes with unknown dimensions (`tf.TensorShape`, `tf.Dimension`).

A shape is either of unknown rank (dims is None) or a tuple of dimensions, each an int or None.
Shape functions use `merge_with` to combine what two sources know and fail when they disagree.
"""


class Dimension:
    """One dimension: an int, or None when unknown. Kept for TF-1.x code that calls `.value`."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is not None:
            value = int(value)
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
        self._value = value

    @property
    def value(self):
        return self._value

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def merge_with(self, other):
        other = as_dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")
        return Dimension(self._value if self._value is not None else other.value)

    def __int__(self):
        if self._value is None:
            raise ValueError("Cannot convert an unknown Dimension to an int")
        return self._value

    __index__ = __int__

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other):
        # Python's default __ne__ would turn an unknown comparison (None) into True.
        equal = self.__eq__(other)
        if equal is NotImplemented or equal is None:
            return equal
        return not equal

    def _compare(self, other, fn):
        """None when either side is unknown (as TF 1.x), else the comparison."""
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return fn(self._value, other.value)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __hash__(self):
        return hash(self._value)

    def _arith(self, other, fn):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other.value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __repr__(self):
        return f"Dimension({self._value})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)


def as_dimension(value):
    return value if isinstance(value, Dimension) else Dimension(value)


def _dim_value(value):
    if isinstance(value, Dimension):
        return value.value
    if value is None:
        return None
    value = int(value)
    if value < 0:
        # TF uses -1 for "unknown" in serialized shapes.
        if value == -1:
            return None
        raise ValueError(f"Dimension {value} must be >= 0")
    return value


class TensorShape:
    """A possibly partially known shape."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (int, Dimension)) and not isinstance(dims, bool):
            self._dims = (_dim_value(dims),)
        else:
            self._dims = tuple(_dim_value(d) for d in dims)

    @property
    def dims(self):
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self):
        """The dims as a tuple of int-or-None (None if the rank is unknown)."""
        return self._dims

    def is_fully_defined(self):
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        total = 1
        for d in self._dims:
            total *= d
        return total

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def assert_has_rank(self, rank):
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def with_rank(self, rank):
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank):
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(Dimension(d) for d in self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            if isinstance(key, slice):
                return TensorShape(None)
            return Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return Dimension(self._dims[key])

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


def as_shape(shape):
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None):
    return TensorShape(None if rank is None else [None] * rank)


def scalar():
    return TensorShape([])


def vector(length):
    return TensorShape([length])


def matrix(rows, cols):
    return TensorShape([rows, cols])


def dimension_value(dimension):
    """The int (or None) of a Dimension or plain value."""
    return dimension.value if isinstance(dimension, Dimension) else dimension
