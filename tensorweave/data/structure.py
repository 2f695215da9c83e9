"""Element structures: nests of tuples and dicts whose leaves are components.

A dataset's element is a nest (a single component, a tuple of nests, or a dict of nests) and is
described by the same nest of TensorSpecs. Inside a pipeline elements travel flat: a tuple of
NumPy arrays in `flatten` order (tuples in order, dicts by sorted key), packed back into the nest
only where user code sees them. Lists are values, not structure (as in TF: `[1, 2]` is one
component), except that a function returning a list is read as returning a tuple.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import sparse_tensor
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util


class TypeSpec:
    """The base of value type descriptions (TF's tf.TypeSpec; TF 1.14 called it Structure)."""

    __slots__ = ()

    def is_compatible_with(self, spec_or_value):
        raise NotImplementedError


class TensorSpec(TypeSpec):
    """The dtype and static shape (unknown dims allowed) of one component."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self.shape = tensor_shape.as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, other):
        return self.dtype == other.dtype and self.shape.is_compatible_with(other.shape)

    def most_specific_compatible(self, other):
        """The spec both this and `other` conform to (unknown where their shapes differ)."""
        if self.dtype != other.dtype:
            raise TypeError(f"component types differ: {self.dtype.name} vs {other.dtype.name}")
        return TensorSpec(_common_shape(self.shape, other.shape), self.dtype)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.dtype == other.dtype and
                self.shape.as_tuple() == other.shape.as_tuple())

    def __hash__(self):
        return hash((self.dtype, self.shape.as_tuple()))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name})"


def _common_shape(a, b):
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([x if x == y else None
                                     for x, y in zip(a.as_tuple(), b.as_tuple())])


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def is_nested(value):
    return isinstance(value, (tuple, dict))


def _composites():
    # composite_specs builds on this module's TensorSpec, so it is imported when first needed.
    from tensorweave.data import composite_specs
    return composite_specs


def flatten(nest):
    """The leaves of `nest` in canonical order; a RaggedTensorSpec or SparseTensorSpec leaf
    stands for the TensorSpecs of its components (composite_specs.py)."""
    if isinstance(nest, dict):
        return [leaf for key in sorted(nest) for leaf in flatten(nest[key])]
    if isinstance(nest, tuple):
        return [leaf for item in nest for leaf in flatten(item)]
    composites = _composites()
    if composites.is_composite_spec(nest):
        return composites.component_specs(nest)
    return [nest]


def pack_as(template, flat):
    """Rebuilds the nest of `template` from `flat` leaves (the inverse of flatten)."""
    flat = list(flat)
    position = [0]

    def build(node):
        if isinstance(node, dict):  # leaves come in sorted-key order; keys keep the template's
            built = {key: build(node[key]) for key in sorted(node)}
            return {key: built[key] for key in node}
        if _is_namedtuple(node):
            return type(node)(*[build(item) for item in node])
        if isinstance(node, tuple):
            return tuple(build(item) for item in node)
        composites = _composites()
        if composites.is_composite_spec(node):
            count = len(composites.component_specs(node))
            parts = flat[position[0]:position[0] + count]
            position[0] += count
            return composites.from_components(node, parts)
        value = flat[position[0]]
        position[0] += 1
        return value

    result = build(template)
    if position[0] != len(flat):
        raise ValueError(f"structure has {position[0]} components, got {len(flat)} values")
    return result


def map_structure(fn, nest):
    return pack_as(nest, [fn(leaf) for leaf in flatten(nest)])


def same_structure(a, b):
    """True when the two nests have the same tuple/dict skeleton."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b) and
                all(same_structure(a[k], b[k]) for k in a))
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and
                all(same_structure(x, y) for x, y in zip(a, b)))
    return True


def check_dense(value, what, error=TypeError):
    """Refuses sparse values clearly: tensorweave datasets hold dense components only."""
    if isinstance(value, (sparse_tensor.SparseTensor, sparse_tensor.SparseTensorValue)):
        raise error(f"{what}: got a SparseTensor; tensorweave datasets hold dense tensors "
                        "only (convert it with tf.sparse.to_dense, or keep its indices, values "
                        "and dense_shape as three components)")


def normalize_value(value):
    """A user value as a nest whose leaves are Tensors or NumPy arrays (TF's dtype defaults)."""
    check_dense(value, "tf.data")
    if isinstance(value, dict):
        return {key: normalize_value(item) for key, item in value.items()}
    if _is_namedtuple(value):
        return type(value)(*[normalize_value(item) for item in value])
    if isinstance(value, tuple):
        return tuple(normalize_value(item) for item in value)
    if isinstance(value, graph_lib.Tensor):
        return value
    if hasattr(value, "_as_graph_element"):
        return value._as_graph_element()
    return tensor_util.to_numpy(value)


def spec_of(value):
    """The TensorSpec of a Tensor or array."""
    if isinstance(value, graph_lib.Tensor):
        return TensorSpec(value.shape, value.dtype)
    return TensorSpec(np.shape(value), dtypes.as_dtype(np.asarray(value).dtype))


def _map_specs(fn, nest):
    """fn of every spec leaf, a composite spec being one leaf (its dtype, shape, class)."""
    if isinstance(nest, dict):
        return {key: _map_specs(fn, item) for key, item in nest.items()}
    if _is_namedtuple(nest):
        return type(nest)(*[_map_specs(fn, item) for item in nest])
    if isinstance(nest, tuple):
        return tuple(_map_specs(fn, item) for item in nest)
    return fn(nest)


def types_of(spec):
    return _map_specs(lambda s: s.dtype, spec)


def shapes_of(spec):
    return _map_specs(lambda s: s.shape, spec)


def classes_of(spec):
    return _map_specs(_composites().value_class, spec)


def spec_from_types_and_shapes(output_types, output_shapes=None):
    """The spec nest of `output_types` with `output_shapes` (same nest; None = unknown)."""
    if output_shapes is None:
        return map_structure(lambda t: TensorSpec(tensor_shape.unknown_shape(), t),
                             _types_nest(output_types))
    types = _types_nest(output_types)
    shapes = _shapes_nest(output_shapes, types)
    if not same_structure(types, shapes):
        raise ValueError(f"output_shapes {output_shapes!r} does not have the structure of "
                         f"output_types {output_types!r}")
    return pack_as(types, [TensorSpec(s, t) for t, s in zip(flatten(types), flatten(shapes))])


def _types_nest(output_types):
    if isinstance(output_types, (list, tuple)) and not _is_namedtuple(output_types):
        return tuple(_types_nest(t) for t in output_types)
    if isinstance(output_types, dict):
        return {key: _types_nest(t) for key, t in output_types.items()}
    if _is_namedtuple(output_types):
        return type(output_types)(*[_types_nest(t) for t in output_types])
    return dtypes.as_dtype(output_types)


def _shapes_nest(output_shapes, types):
    """Shapes are given as nests of shape-likes; a list is a shape unless `types` has a tuple
    there."""
    if isinstance(types, dict):
        return {key: _shapes_nest(output_shapes[key], types[key]) for key in types}
    if isinstance(types, tuple):
        if not isinstance(output_shapes, (list, tuple)) or len(output_shapes) != len(types):
            raise ValueError(f"output_shapes {output_shapes!r} does not match output_types' "
                             f"{len(types)} components")
        items = [_shapes_nest(s, t) for s, t in zip(output_shapes, types)]
        return type(types)(*items) if _is_namedtuple(types) else tuple(items)
    return tensor_shape.as_shape(output_shapes)


def to_component(value, spec, what):
    """`value` as an array of spec's dtype, checked against its static shape."""
    array = tensor_util.to_numpy(value, spec.dtype) if not (
        isinstance(value, np.ndarray) and value.dtype == spec.dtype.np_dtype) else value
    if not spec.shape.is_compatible_with(array.shape):
        raise ValueError(f"{what}: a value of shape {array.shape} does not match the declared "
                         f"shape {spec.shape}")
    return array
