"""Operation and Tensor: the nodes of a graph and the values flowing between them, and the
binding of an op's inputs and attrs to its signature. Nothing here executes.

Building an Operation binds its type attrs from its inputs, checks them, and runs its shape
function, so that a mismatch fails where the user wrote it, naming the op.
"""
import os
import sys

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.device import canonical_name

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_location():
    """'file:line' of the innermost caller outside the tensorweave package (for error messages)."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) and "contextlib" not in filename:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"

class Tensor:
    """One output of an Operation: a symbolic handle to a value computed when a session runs."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")
    # Above ndarray's priority, as in TF: `numpy_array - tensor` defers to Tensor.__rsub__ and
    # builds an op instead of NumPy trying to turn the tensor into an array.
    __array_priority__ = 100
    # Python operators are filled in by ops/math_ops.py (the framework layer cannot import ops).
    _OVERLOADABLE = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                     "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
                     "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
                     "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__",
                     "__or__", "__ror__", "__xor__", "__rxor__", "__invert__", "__getitem__")

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = tensor_shape.unknown_shape()
        self._consumers = []

    @classmethod
    def _override_operator(cls, name, fn):
        if name not in cls._OVERLOADABLE:
            raise ValueError(f"{name} is not an overloadable Tensor operator")
        setattr(cls, name, fn)

    @property
    def op(self):
        return self._op

    @property
    def graph(self):
        return self._op.graph

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Narrows the static shape; fails if `shape` contradicts what is known."""
        try:
            self._shape = self._shape.merge_with(shape)
        except ValueError:
            raise ValueError(f"Tensor {self.name}: cannot set shape {tensor_shape.as_shape(shape)}"
                             f", its known shape is {self._shape}") from None

    def consumers(self):
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        return _run_with_default_session(self, feed_dict, session)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError("Using a tf.Tensor as a Python bool is not allowed: the value is only known "
                        "when a session runs it. Use tf.cond to branch on it.")

    def __iter__(self):
        dims = self._shape.as_tuple()
        if dims is None or not dims or dims[0] is None:
            raise TypeError(f"Tensor {self.name} is not iterable: its first dimension is not "
                            "statically known.")
        return (self[i] for i in range(dims[0]))

    def __len__(self):
        dims = self._shape.as_tuple()
        if dims is None or not dims or dims[0] is None:
            raise TypeError(f"len() of tensor {self.name} is not statically known.")
        return dims[0]

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Cannot convert symbolic tensor {self.name} to a NumPy array; run it "
                        "in a session to get its value.")

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"


class Operation:
    """A node of the graph."""

    def __init__(self, graph, op_def, name, inputs, attrs, output_dtypes, control_inputs, device,
                 location):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = list(inputs)
        self._attrs = attrs
        self._control_inputs = list(control_inputs)
        self._device = device
        self._location = location
        self._id = graph._next_id()
        self._outputs = [Tensor(self, i, dt) for i, dt in enumerate(output_dtypes)]
        self._control_outputs = []

    def _connect(self):
        """Records this op as a consumer of its inputs; the graph calls it once the op is valid,
        so an op whose shape function failed never shows up in `tensor.consumers()`."""
        for tensor in self._inputs:
            tensor._consumers.append(self)
        for op in self._control_inputs:
            op._control_outputs.append(self)

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._op_def.name

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self):
        return tuple(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def device(self):
        """The requested device (after tf.device scopes), not where the op ended up running."""
        return self._device

    @property
    def location(self):
        """'file:line' of the user code that created this op."""
        return self._location

    @property
    def node_def(self):
        from tensorweave.framework import graph_io
        return graph_io.node_def_of(self)

    @property
    def attrs(self):
        return dict(self._attrs)

    def get_attr(self, name):
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation {self._name!r} ({self.type}) has no attr named "
                             f"{name!r}") from None

    def _set_attr(self, name, value):
        self._attrs[name] = value

    def _set_device(self, device):
        self._device = canonical_name(device)

    def _update_input(self, index, tensor):
        """Replaces input `index` by `tensor` of the same dtype (as TF's
        Operation._update_input); a loop's gradient function reads kept forward values this
        way instead of recomputing them (ops/functional_ops.py)."""
        old = self._inputs[index]
        if tensor.dtype != old.dtype or tensor.graph is not self._graph:
            raise ValueError(f"{self._name}: input {index} ({old.name}, {old.dtype.name}) "
                             f"cannot be replaced by {tensor.name} ({tensor.dtype.name})")
        old._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)

    def _add_control_input(self, op):
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)

    def _add_control_inputs(self, ops):
        for op in ops:
            self._add_control_input(op)

    def colocation_groups(self):
        groups = [s for s in self._attrs.get("_class", []) if s.startswith("loc:@")]
        return groups or [f"loc:@{self._name}"]

    def values(self):
        return tuple(self._outputs)

    def run(self, feed_dict=None, session=None):
        _run_with_default_session(self, feed_dict, session)

    def describe(self):
        """How errors name this op: its name, type and the user line that created it."""
        return f"{self._name} ({self.type}, defined at {self._location})"

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self.type}>"

def _run_with_default_session(fetch, feed_dict, session):
    if session is None:
        # graph.py imports this module, so the default-session stack is looked up at call time.
        from tensorweave.framework.graph import get_default_session
        session = get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate: no default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to eval()/run().")
    if session.graph is not fetch.graph:
        raise ValueError(f"Cannot use the given session to evaluate {fetch.name}: it belongs to "
                         "another graph than the session's.")
    return session.run(fetch, feed_dict)

def bind_inputs(graph, op_def, op_name, inputs, attrs):
    """Checks inputs against the signature, binds type/number attrs, returns the flat inputs."""
    if len(inputs) != len(op_def.inputs):
        raise ValueError(f"Op {op_name!r} ({op_def.name}) takes {len(op_def.inputs)} inputs "
                         f"({', '.join(a.name for a in op_def.inputs)}), got {len(inputs)}")
    flat = []
    for arg, value in zip(op_def.inputs, inputs):
        values = list(value) if arg.is_list else [value]
        for tensor in values:
            if not isinstance(tensor, Tensor):
                raise TypeError(f"Op {op_name!r} ({op_def.name}): input {arg.name!r} must be a "
                                f"Tensor, got {type(tensor).__name__}")
            if tensor.graph is not graph:
                raise ValueError(f"Op {op_name!r} ({op_def.name}): input {arg.name!r} "
                                 f"({tensor.name}) is from a different graph.")
        if arg.number_attr is not None:
            _bind_attr(attrs, arg.number_attr, len(values), op_name, op_def, arg)
        if arg.type_list_attr is not None:
            _bind_attr(attrs, arg.type_list_attr, [t.dtype for t in values], op_name, op_def, arg)
        elif arg.type_attr is not None:
            for tensor in values:
                _bind_attr(attrs, arg.type_attr, tensor.dtype, op_name, op_def, arg)
        else:
            for tensor in values:
                if tensor.dtype != arg.fixed_dtype:
                    raise TypeError(f"Op {op_name!r} ({op_def.name}): input {arg.name!r} must be "
                                    f"{arg.fixed_dtype.name}, got {tensor.dtype.name} "
                                    f"({tensor.name})")
        flat.extend(values)
    for attr_name, attr_def in op_def.attrs.items():
        if attr_name not in attrs:
            if not attr_def.has_default:
                raise ValueError(f"Op {op_name!r} ({op_def.name}) is missing required attr "
                                 f"{attr_name!r}")
            attrs[attr_name] = attr_def.default
        elif attr_def.kind == "type":
            attrs[attr_name] = dtypes_lib.as_dtype(attrs[attr_name])
        elif attr_def.kind == "shape" and attrs[attr_name] is not None:
            attrs[attr_name] = tensor_shape.as_shape(attrs[attr_name])
    for attr_name, allowed in op_def.allowed_types.items():
        if attrs[attr_name] not in allowed:
            raise TypeError(f"Op {op_name!r} ({op_def.name}): {attr_name}={attrs[attr_name].name} is "
                            f"not allowed; allowed types: {', '.join(t.name for t in allowed)}")
    return flat


def _bind_attr(attrs, attr_name, value, op_name, op_def, arg):
    if attr_name in attrs and attrs[attr_name] is not None:
        bound = attrs[attr_name]
        if isinstance(value, dtypes_lib.DType):
            bound = dtypes_lib.as_dtype(bound)
        if bound != value:
            what = value.name if isinstance(value, dtypes_lib.DType) else value
            was = bound.name if isinstance(bound, dtypes_lib.DType) else bound
            raise TypeError(f"Op {op_name!r} ({op_def.name}): input {arg.name!r} has "
                            f"{attr_name}={what}, which does not match {attr_name}={was} "
                            "bound by an earlier input or attr")
    attrs[attr_name] = value


def output_dtypes(op_def, op_name, attrs):
    result = []
    for arg in op_def.outputs:
        if arg.type_list_attr is not None:
            result.extend(dtypes_lib.as_dtype(t) for t in attrs[arg.type_list_attr])
            continue
        dtype = attrs[arg.type_attr] if arg.type_attr is not None else arg.fixed_dtype
        if dtype is None:
            raise ValueError(f"Op {op_name!r} ({op_def.name}): attr {arg.type_attr!r} is unbound")
        count = attrs[arg.number_attr] if arg.number_attr is not None else 1
        result.extend([dtypes_lib.as_dtype(dtype)] * count)
    return result


def run_shape_fn(op):
    try:
        shapes = op._op_def.shape_fn(op)
    except (ValueError, TypeError, IndexError) as exc:
        raise ValueError(f"{op.describe()}: {exc}") from None
    if len(shapes) != len(op._outputs):
        raise AssertionError(f"Shape function of {op.type} returned {len(shapes)} shapes for "
                             f"{len(op._outputs)} outputs")
    for tensor, shape in zip(op._outputs, shapes):
        tensor._shape = tensor_shape.as_shape(shape)


# --- the default graph and default session stacks ----------------------------------------------
