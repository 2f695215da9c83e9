"""`tf.experimental.ExtensionType`: user-defined values made of typed fields, e.g.

    class MaskedTensor(tf.experimental.ExtensionType):
        values: tf.Tensor
        mask: tf.Tensor
        def __validate__(self):
            self.values.shape.assert_is_compatible_with(self.mask.shape)

Fields come from the class annotations (a class attribute is the default). Construction
converts each value to its annotation: tf.Tensor (convert_to_tensor), tf.TensorShape,
tf.DType, int / float / str / bool (checked), another ExtensionType, typing.Tuple,
typing.Mapping, typing.Optional / Union; then `__validate__` runs, and the value is immutable.
A class may define its own __init__ that assigns the fields. Values are composite tensors:
Session.run fetches them (a value of the same class whose tensor fields are NumPy arrays)
and feeds them, and elementwise ops on them are answered by the handlers registered with
tf.experimental.dispatch_for_* (framework dispatch: dispatch.py).
"""
import collections.abc
import typing

import numpy as np

from tensorweave.data.structure import TensorSpec, TypeSpec
from tensorweave.framework import dtypes, tensor_shape, tensor_util
from tensorweave.framework.composite_tensor import CompositeTensor
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import Tensor

_FROZEN = "_tensorweave_frozen"


def _convert(value, annotation, where):
    origin = typing.get_origin(annotation)
    if annotation is Tensor:
        return value if isinstance(value, np.ndarray) and _RAW.active else \
            convert_to_tensor(value)
    if annotation is tensor_shape.TensorShape:
        return tensor_shape.as_shape(value)
    if annotation is dtypes.DType:
        return dtypes.as_dtype(value)
    if annotation is typing.Any:
        return value
    if origin is typing.Union:
        for choice in typing.get_args(annotation):
            if choice is type(None) and value is None:
                return None
            try:
                return _convert(value, choice, where)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"{where}: expected {annotation}, got {value!r}")
    if origin in (tuple, typing.Tuple):
        args = typing.get_args(annotation)
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"{where}: expected a tuple, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(v, args[0], where) for v in value)
        if len(args) != len(value):
            raise ValueError(f"{where}: expected {len(args)} items, got {len(value)}")
        return tuple(_convert(v, a, where) for v, a in zip(value, args))
    if origin in (dict, collections.abc.Mapping):
        key_type, value_type = typing.get_args(annotation)
        if not isinstance(value, typing.Mapping):
            raise TypeError(f"{where}: expected a mapping, got {value!r}")
        return {_convert(k, key_type, where): _convert(v, value_type, where)
                for k, v in value.items()}
    if annotation is type(None):
        if value is not None:
            raise TypeError(f"{where}: expected None, got {value!r}")
        return None
    if isinstance(annotation, type):
        if annotation is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, annotation):
            raise TypeError(f"{where}: expected {annotation.__name__}, got "
                            f"{type(value).__name__} {value!r}")
        return value
    raise TypeError(f"{where}: unsupported field annotation {annotation!r}")


class _RawMode:
    """While rebuilding a fetched value, tensor fields keep their NumPy arrays."""
    active = False


_RAW = _RawMode()


def _fields(cls):
    hints = {}
    for klass in reversed(cls.__mro__):
        hints.update({k: v for k, v in getattr(klass, "__annotations__", {}).items()
                      if not k.startswith("_")})
    return hints


class ExtensionTypeSpec(TypeSpec):
    """The type of an ExtensionType value: its class and each field's spec (a TensorSpec for
    a tensor field, the value itself otherwise)."""

    __slots__ = ("_value_type", "_field_specs")

    def __init__(self, value_type=None, **field_specs):
        self._value_type = value_type
        self._field_specs = dict(field_specs)

    value_type = property(lambda self: self._value_type)

    @classmethod
    def from_value(cls, value):
        return cls(type(value), **{name: _spec_of(getattr(value, name))
                                   for name in _fields(type(value))})

    def is_compatible_with(self, other):
        if isinstance(other, ExtensionType):
            other = ExtensionTypeSpec.from_value(other)
        if not isinstance(other, ExtensionTypeSpec) or other._value_type is not self._value_type:
            return False
        for name, spec in self._field_specs.items():
            theirs = other._field_specs.get(name)
            if isinstance(spec, TypeSpec):
                if not (isinstance(theirs, TypeSpec) and spec.is_compatible_with(theirs)):
                    return False
            elif spec != theirs:
                return False
        return True

    def __eq__(self, other):
        return isinstance(other, ExtensionTypeSpec) and \
            other._value_type is self._value_type and other._field_specs == self._field_specs

    def __hash__(self):
        return hash(self._value_type)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self._field_specs.items())
        name = self._value_type.__name__ if self._value_type else "?"
        return f"{name}.Spec({fields})"


def _spec_of(value):
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, ExtensionType):
        return ExtensionTypeSpec.from_value(value)
    return value


class ExtensionType(CompositeTensor):
    """See the module docstring."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.Spec = type("Spec", (ExtensionTypeSpec,), {
            "__init__": lambda self, **specs: ExtensionTypeSpec.__init__(self, cls, **specs),
            "__qualname__": f"{cls.__qualname__}.Spec"})
        custom = cls.__dict__.get("__init__")
        if custom is not None:
            def init(self, *args, **kwargs):
                object.__setattr__(self, _FROZEN, False)
                custom(self, *args, **kwargs)
                self._finish({name: getattr(self, name) for name in _fields(type(self))
                              if name in self.__dict__ or hasattr(type(self), name)})
            cls.__init__ = init

    def __init__(self, *args, **kwargs):
        fields = list(_fields(type(self)))
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}: takes {len(fields)} fields, got "
                            f"{len(args)} positional arguments")
        values = dict(zip(fields, args))
        for name, value in kwargs.items():
            if name not in fields:
                raise TypeError(f"{type(self).__name__}: unexpected field {name!r}")
            if name in values:
                raise TypeError(f"{type(self).__name__}: field {name!r} given twice")
            values[name] = value
        self._finish(values)

    def _finish(self, values):
        cls = type(self)
        object.__setattr__(self, _FROZEN, False)
        for name, annotation in _fields(cls).items():
            if name in values:
                value = values[name]
            elif name in cls.__dict__ or any(name in k.__dict__ for k in cls.__mro__[1:]):
                value = getattr(cls, name)
            else:
                raise TypeError(f"{cls.__name__}: missing required field {name!r}")
            object.__setattr__(self, name, _convert(value, annotation,
                                                    f"{cls.__name__}.{name}"))
        validate = getattr(self, "__validate__", None)
        if validate is not None and not _RAW.active:
            validate()
        object.__setattr__(self, _FROZEN, True)

    def __setattr__(self, name, value):
        if self.__dict__.get(_FROZEN, False):
            raise AttributeError(f"Cannot mutate attribute {name!r} outside the custom "
                                 f"constructor of ExtensionType {type(self).__name__}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        raise AttributeError(f"Cannot mutate attribute {name!r} of ExtensionType "
                             f"{type(self).__name__}")

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _fields(type(self)))
        return f"{type(self).__name__}({fields})"

    @property
    def _type_spec(self):
        return ExtensionTypeSpec.from_value(self)

    # --- composite tensor: fetches, feeds and elementwise dispatch --------------------------
    def _leaves(self):
        leaves = []
        for name in _fields(type(self)):
            value = getattr(self, name)
            if isinstance(value, ExtensionType):
                leaves.extend(value._leaves())
            elif isinstance(value, (Tensor, np.ndarray)):
                leaves.append(value)
        return leaves

    def _rebuilt(self, leaves):
        values = {}
        for name in _fields(type(self)):
            value = getattr(self, name)
            if isinstance(value, ExtensionType):
                count = len(value._leaves())
                values[name], leaves = value._rebuilt(leaves[:count]), leaves[count:]
            elif isinstance(value, (Tensor, np.ndarray)):
                values[name], leaves = leaves[0], leaves[1:]
            else:
                values[name] = value
        rebuilt = object.__new__(type(self))
        _RAW.active = True
        try:
            ExtensionType._finish(rebuilt, values)
        finally:
            _RAW.active = False
        return rebuilt

    def _fetch_components(self):
        return self._leaves()

    def _value_from_fetched(self, arrays):
        return self._rebuilt(list(arrays))

    def _feed_components(self, value):
        """The fed value's fields: arrays, or constant tensors (a value built from NumPy
        arrays holds them as constants)."""
        parts = []
        for leaf in value._leaves():
            if isinstance(leaf, Tensor):
                constant = tensor_util.constant_value(leaf)
                if constant is None:
                    raise TypeError(f"feeding a {type(value).__name__}: field tensor "
                                    f"{leaf.name} is not a constant; feed a value built from "
                                    "NumPy arrays")
                leaf = constant
            parts.append(leaf)
        return list(zip(self._leaves(), parts))

    @classmethod
    def _elementwise(cls, op, operands, name):
        from tensorweave.data import dispatch
        return dispatch.elementwise(op, operands, name)

    @classmethod
    def _dispatch(cls, function_name, args, kwargs):
        from tensorweave.data import dispatch
        return dispatch.by_name(function_name, args, kwargs)

    @classmethod
    def _binary_assert(cls, assert_api, x, y, kwargs):
        from tensorweave.data import dispatch
        return dispatch.binary_assert(assert_api, x, y, kwargs)


class BatchableExtensionType(ExtensionType):
    """An ExtensionType whose values can be batched and unbatched (by tf.data, map_fn): here
    batching a value of fields [shape...] stacks the tensor fields along a new first
    dimension (`batch`), and `unbatch` takes them apart (ExtensionTypeBatchEncoder)."""

    __batch_encoder__ = None


class ExtensionTypeBatchEncoder:
    """How a BatchableExtensionType value is batched: `batch(values)` stacks each tensor field
    of same-class values; `unbatch(value)` splits them along the first dimension; `encode`
    gives a value's tensors and `decode(like, tensors)` rebuilds a value shaped like `like`
    (a value of the class: TF takes its spec) from them."""

    def batch(self, values):
        from tensorweave.ops import array_ops
        values = list(values)
        leaves = zip(*[v._leaves() for v in values])
        return values[0]._rebuilt([array_ops.stack(list(group)) for group in leaves])

    def unbatch(self, value):
        from tensorweave.ops import array_ops
        leaves = [array_ops.unstack(leaf) for leaf in value._leaves()]
        return [value._rebuilt(list(group)) for group in zip(*leaves)]

    def encode(self, value):
        return value._leaves()

    def decode(self, like, encoded):
        return like._rebuilt(list(encoded))


def as_dict(value):
    """The fields of an ExtensionType value, by name."""
    if not isinstance(value, ExtensionType):
        raise TypeError(f"as_dict: expected an ExtensionType value, got {type(value).__name__}")
    return {name: getattr(value, name) for name in _fields(type(value))}
