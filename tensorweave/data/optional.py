"""`tf.data.experimental.Optional` and get_next_as_optional: a value that may be absent.

TF keeps an optional in one variant tensor. Here an Optional is a pair of tensors: a scalar
bool `has_value` and the value's components, which hold zeros when there is no value (the op
IteratorGetNextOrEmpty produces both, from an iterator, without raising at the end of data).
get_value() checks has_value when it runs: reading an empty optional raises
InvalidArgumentError, as in TF.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.data import structure
from tensorweave.data.structure import TensorSpec, TypeSpec


class OptionalSpec(TypeSpec):
    """The type of an Optional: the element_spec of its value."""

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def value_type(self):
        return Optional

    @staticmethod
    def from_value(value):
        return OptionalSpec(value.element_spec)

    def is_compatible_with(self, spec_or_value):
        other = spec_or_value
        if isinstance(other, Optional):
            other = other._type_spec
        return isinstance(other, OptionalSpec) and structure.same_structure(
            self._element_spec, other._element_spec) and all(
            a.is_compatible_with(b) for a, b in zip(structure.flatten(self._element_spec),
                                                    structure.flatten(other._element_spec)))

    def __eq__(self, other):
        return isinstance(other, OptionalSpec) and self._element_spec == other._element_spec

    def __hash__(self):
        return hash(tuple(structure.flatten(self._element_spec)))

    def __repr__(self):
        return f"OptionalSpec({self._element_spec!r})"


class Optional:
    """A value (a nest of tensors) that may be absent. Build with from_value, empty or
    get_next_as_optional."""

    def __init__(self, has_value, components, element_spec):
        self._has_value = has_value
        self._components = list(components)
        self._element_spec = element_spec

    @staticmethod
    def from_value(value):
        """An optional holding `value` (a nest of tensors or values)."""
        from tensorweave.ops import array_ops
        nest = structure.normalize_value(value)
        tensors = [convert_to_tensor(leaf) for leaf in structure.flatten(nest)]
        spec = structure.pack_as(nest, [TensorSpec(t.shape, t.dtype) for t in tensors])
        return Optional(array_ops.constant(True), tensors, spec)

    @staticmethod
    def empty(element_spec):
        """An optional of this element_spec holding nothing."""
        from tensorweave.ops import array_ops
        leaves = structure.flatten(element_spec)
        for leaf in leaves:
            if not isinstance(leaf, TensorSpec):
                raise TypeError(f"Optional.empty: element_spec must be a nest of TensorSpecs, "
                                f"got {type(leaf).__name__}")
        components = [array_ops.zeros([d or 0 for d in (leaf.shape.as_list() if
                                                        leaf.shape.ndims is not None else [])],
                                      leaf.dtype) if leaf.dtype != dtypes.string else
                      array_ops.fill([d or 0 for d in (leaf.shape.as_list() if
                                                       leaf.shape.ndims is not None else [])],
                                     b"") for leaf in leaves]
        return Optional(array_ops.constant(False), components, element_spec)

    none_from_structure = empty  # TF 1.x's name

    @property
    def element_spec(self):
        return self._element_spec

    value_structure = element_spec

    @property
    def _type_spec(self):
        return OptionalSpec(self._element_spec)

    def has_value(self, name=None):
        """A scalar bool tensor: whether there is a value."""
        from tensorweave.ops import array_ops
        return array_ops.identity(self._has_value, name=name or "has_value")

    def get_value(self, name=None):
        """The value (a nest of tensors); running it on an empty optional raises
        InvalidArgumentError."""
        from tensorweave.ops import array_ops, check_ops
        check = check_ops.assert_equal(self._has_value, True, message=(
            "get_value: the optional does not have a value"))
        with graph_lib.control_dependencies([check]):
            values = [array_ops.identity(c, name=name) for c in self._components]
        return structure.pack_as(self._element_spec, values)


def get_next_as_optional(iterator):
    """The iterator's next element as an Optional: empty, not an error, at the end of data."""
    from tensorweave.ops import dataset_ops
    if not hasattr(iterator, "_handle") or not hasattr(iterator, "element_spec"):
        raise TypeError(f"get_next_as_optional: expected a tf.data.Iterator, got "
                        f"{type(iterator).__name__}")
    spec = iterator.element_spec
    flat = structure.flatten(spec)
    with graph_lib.get_default_graph().colocate_with(iterator._handle.op):
        has_value, components = dataset_ops.iterator_get_next_or_empty(
            iterator._handle, [s.dtype for s in flat], [s.shape for s in flat])
    return Optional(has_value, components, spec)
