"""Graph, Operation and Tensor: the graph as data. Nothing here executes.

An Operation is a node: an op type from the op-definition table, input tensors, control inputs,
attrs and a requested device. Building an op binds its type attrs from its inputs, checks them,
and runs its shape function, so that a mismatch fails where the user wrote it, naming the op.
"""
import contextlib
import os
import re
import sys
import threading

from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import op_def as op_def_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.device import DeviceSpec, merge_device, canonical_name

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


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
        session = get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate: no default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to eval()/run().")
    if session.graph is not fetch.graph:
        raise ValueError(f"Cannot use the given session to evaluate {fetch.name}: it belongs to "
                         "another graph than the session's.")
    return session.run(fetch, feed_dict)


class Graph:
    """A dataflow graph: Operations and the Tensors between them, plus scopes and collections."""

    def __init__(self):
        self._ops_by_name = {}
        self._ops = []
        self._names_in_use = {}
        self._last_id = 0
        self._lock = threading.RLock()
        self._collections = {}
        self._finalized = False
        self._seed = None
        self._unfeedable = set()
        self._unfetchable = set()
        self._local = threading.local()
        self._version = 0
        self._building_function = False

    # Per-thread builder state: scopes, control dependencies, devices, colocation.
    def _state(self):
        local = self._local
        if not hasattr(local, "name_stack"):
            local.name_stack = ""
            local.control_stack = []
            local.device_stack = []
            local.colocation_stack = []
        return local

    def _next_id(self):
        self._last_id += 1
        return self._last_id

    @property
    def version(self):
        return self._last_id

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        self._finalized = True

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def _unsafe_unfinalize(self):
        self._finalized = False

    def as_default(self):
        return _default_graph_stack.get_controller(self)

    # --- names -------------------------------------------------------------------------------
    def get_name_scope(self):
        return self._state().name_stack

    def unique_name(self, name, mark_as_used=True):
        scope = self._state().name_stack
        if scope:
            name = f"{scope}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = name
            while True:
                candidate = f"{base}_{count}"
                if candidate.lower() not in self._names_in_use:
                    break
                count += 1
            if mark_as_used:
                self._names_in_use[candidate.lower()] = 1
                self._names_in_use[key] = count + 1
            name = candidate
        return name

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens scope `name` (made unique); a name ending in '/' re-enters that exact scope."""
        state = self._state()
        old = state.name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"{name!r} is not a valid scope name")
            new = self.unique_name(name)
        state.name_stack = new
        try:
            yield "" if not new else new + "/"
        finally:
            state.name_stack = old

    # --- control dependencies -------------------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        state = self._state()
        old = state.control_stack
        if control_inputs is None:
            state.control_stack = []
        else:
            ops = []
            for item in control_inputs:
                op = self.as_graph_element(item, allow_tensor=True, allow_operation=True)
                if isinstance(op, Tensor):
                    op = op.op
                ops.append(op)
            state.control_stack = old + [op for op in ops if op not in old]
        try:
            yield
        finally:
            state.control_stack = old

    # --- devices and colocation -----------------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        state = self._state()
        state.device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            state.device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        state = self._state()
        if op is None:
            old = state.colocation_stack
            state.colocation_stack = []
            try:
                yield
            finally:
                state.colocation_stack = old
            return
        if isinstance(op, Tensor):
            op = op.op
        elif hasattr(op, "op") and isinstance(op.op, Operation):  # a Variable
            op = op.op
        old = state.colocation_stack
        state.colocation_stack = ([] if ignore_existing else old) + [op]
        # Colocation overrides any enclosing device scope, as in TF.
        old_devices = state.device_stack
        state.device_stack = []
        try:
            yield
        finally:
            state.colocation_stack = old
            state.device_stack = old_devices

    def _apply_device_functions(self, op):
        """The op's device after the `tf.device` stack, applied innermost first, as TF 1.x does.

        A string or DeviceSpec fills only the fields still unset (so inner scopes win); a function
        is called with the op carrying the device chosen so far (`op.device`) and its result
        replaces it (a function that wants to keep inner fields merges them itself, as
        `replica_device_setter` does); `tf.device(None)` hides every outer scope.
        """
        for spec in reversed(self._state().device_stack):
            if spec is None:
                break
            if callable(spec) and not isinstance(spec, (str, DeviceSpec)):
                op._device = canonical_name(spec(op) or "")
            elif spec:
                op._device = merge_device(spec, op._device)
        return op._device

    # --- building ops ---------------------------------------------------------------------------
    def create_op(self, op_type, inputs, attrs=None, name=None):
        """Creates an op of `op_type` with the given input tensors (lists for list args) and attrs.

        Inputs must already be Tensors of this graph; op wrappers convert Python values first.
        """
        self._check_not_finalized()
        op_def = op_def_lib.get_op_def(op_type)
        attrs = dict(attrs or {})
        if name and name.endswith("/"):
            # A scope name used as an op name ("Variable/" from `with name_scope(...) as n`)
            # names the op exactly, as in TF.
            name = name[:-1]
            if name in self._ops_by_name:
                raise ValueError(f"Duplicate op name {name!r}")
            self._names_in_use.setdefault(name.lower(), 1)
        else:
            name = self.unique_name(name or op_type)
        if not _VALID_OP_NAME.match(name):
            raise ValueError(f"{name!r} is not a valid op name")
        flat_inputs = _bind_inputs(self, op_def, name, inputs, attrs)
        output_dtypes = _output_dtypes(op_def, name, attrs)
        state = self._state()
        control_inputs = [op for op in state.control_stack
                          if all(t.op is not op for t in flat_inputs)]
        with self._lock:
            op = Operation(self, op_def, name, flat_inputs, attrs, output_dtypes, control_inputs,
                           "", _user_location())
            op._device = self._apply_device_functions(op)
            if state.colocation_stack:
                op._attrs["_class"] = sorted({g for t in state.colocation_stack
                                              for g in t.colocation_groups()})
                # The innermost colocation target with a device decides (device scopes opened
                # inside the colocate_with block apply only when no target has one).
                for target in reversed(state.colocation_stack):
                    if target.device:
                        op._device = target.device
                        break
            _run_shape_fn(op)
            self._ops_by_name[name] = op
            self._ops.append(op)
        return op

    def _add_imported_op(self, op_type, name, inputs, attrs, control_inputs, device):
        """Adds a deserialized op with its exact name (graph_io uses this)."""
        self._check_not_finalized()
        if name in self._ops_by_name:
            raise ValueError(f"Duplicate op name {name!r} in imported graph")
        op_def = op_def_lib.get_op_def(op_type)
        attrs = dict(attrs)
        flat_inputs = _bind_inputs(self, op_def, name, inputs, attrs)
        output_dtypes = _output_dtypes(op_def, name, attrs)
        op = Operation(self, op_def, name, flat_inputs, attrs, output_dtypes, control_inputs,
                       canonical_name(device), "<imported>")
        _run_shape_fn(op)
        self._names_in_use[name.lower()] = self._names_in_use.get(name.lower(), 0) + 1
        self._ops_by_name[name] = op
        self._ops.append(op)
        return op

    # --- lookup ---------------------------------------------------------------------------------
    def get_operations(self):
        return list(self._ops)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings, got {type(name).__name__} {name!r}")
        if ":" in name:
            raise ValueError(f"The name {name!r} looks like a Tensor name, not an Operation name; "
                             "use get_tensor_by_name, or drop the ':index'.")
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings, got {type(name).__name__} {name!r}")
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"The name {name!r} looks like an Operation name, not a Tensor name "
                             "('op_name:output_index').")
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist: the "
                           f"operation {op_name!r} is not in the graph.")
        index = int(index)
        if index >= len(op._outputs):
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist: "
                           f"{op_name} has only {len(op._outputs)} outputs.")
        return op._outputs[index]

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        if hasattr(obj, "_as_graph_element") and not isinstance(obj, (Tensor, Operation)):
            obj = obj._as_graph_element()
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj.name} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj.name} is not an element of this graph.")
            return obj
        if isinstance(obj, str):
            if ":" in obj:
                if not allow_tensor:
                    raise ValueError(f"Name {obj!r} names a Tensor, but an Operation is expected "
                                     "here.")
                return self.get_tensor_by_name(obj)
            if not allow_operation:
                raise ValueError(f"Name {obj!r} names an Operation, but a Tensor name "
                                 "('op:index') is expected here.")
            return self.get_operation_by_name(obj)
        raise TypeError(f"Cannot interpret {type(obj).__name__} {obj!r} as a graph element "
                        f"(allowed: {'Tensor ' if allow_tensor else ''}"
                        f"{'Operation' if allow_operation else ''}).")

    # --- collections ----------------------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._check_not_finalized()
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items if hasattr(item, "name") and pattern.match(item.name)]

    def get_all_collection_keys(self):
        return [key for key, items in self._collections.items() if items]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # --- feeding / fetching restrictions -------------------------------------------------------
    def prevent_feeding(self, tensor):
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor):
        return tensor not in self._unfeedable

    def prevent_fetching(self, op):
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op):
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    def as_graph_def(self, add_shapes=False):
        from tensorweave.framework import graph_io
        return graph_io.graph_to_graph_def(self, add_shapes=add_shapes)


def _bind_inputs(graph, op_def, op_name, inputs, attrs):
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


def _output_dtypes(op_def, op_name, attrs):
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


def _run_shape_fn(op):
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
class _DefaultStack(threading.local):
    def __init__(self):
        super().__init__()
        self.stack = []

    def get_default(self):
        return self.stack[-1] if self.stack else None

    @contextlib.contextmanager
    def get_controller(self, default):
        self.stack.append(default)
        try:
            yield default
        finally:
            if self.stack and self.stack[-1] is default:
                self.stack.pop()
            elif default in self.stack:
                self.stack.remove(default)


class _DefaultGraphStack(_DefaultStack):
    _global_default_graph = None

    def get_default(self):
        top = super().get_default()
        if top is not None:
            return top
        if _DefaultGraphStack._global_default_graph is None:
            _DefaultGraphStack._global_default_graph = Graph()
        return _DefaultGraphStack._global_default_graph

    def reset(self):
        if self.stack:
            raise AssertionError("Do not use tf.reset_default_graph() inside a `with "
                                 "graph.as_default()` block.")
        _DefaultGraphStack._global_default_graph = None


_default_graph_stack = _DefaultGraphStack()
_default_session_stack = _DefaultStack()


def get_default_graph():
    return _default_graph_stack.get_default()


def reset_default_graph():
    _default_graph_stack.reset()


def get_default_session():
    return _default_session_stack.get_default()


def default_session(session):
    return _default_session_stack.get_controller(session)


# Module-level conveniences over the default graph (re-exported as tf.*).
@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """`tf.name_scope`; with `values`, their graph becomes the default inside, as in TF."""
    graph = _graph_of(values) if values else get_default_graph()
    with graph.as_default(), graph.name_scope(name if name is not None else default_name) as n:
        yield n


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def _graph_of(values):
    for value in values:
        graph = getattr(value, "graph", None)
        if isinstance(graph, Graph):
            return graph
    return get_default_graph()


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    METRIC_VARIABLES = "metric_variables"
    VARIABLES = GLOBAL_VARIABLES
