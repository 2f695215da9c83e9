"""Graph: a set of Operations plus the builder state around them (name scopes, control
dependencies, device and colocation scopes), collections, and the default graph and session
stacks. Nothing here executes; Operation and Tensor live in operation.py.
"""
import contextlib
import re
import threading

from tensorweave.framework import op_def as op_def_lib
from tensorweave.framework.device import DeviceSpec, merge_device, canonical_name
from tensorweave.framework.operation import (Operation, Tensor, _user_location,  # noqa: F401
                                             bind_inputs, output_dtypes, run_shape_fn)

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


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
        with self._lock:
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

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Ops of a mapped type created inside take the gradient registered under the mapped
        name (kept as the private attr `_gradient_op_type`, so GraphDefs carry it)."""
        if not isinstance(op_type_map, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in op_type_map.items()):
            raise TypeError("gradient_override_map expects a dict of op type -> gradient name "
                            "(strings)")
        old = dict(getattr(self, "_gradient_overrides", {}))
        self._gradient_overrides = {**old, **op_type_map}
        try:
            yield
        finally:
            self._gradient_overrides = old

    # --- resource containers ---------------------------------------------------------------------
    @contextlib.contextmanager
    def container(self, container_name):
        """Stateful ops created inside (variables, queues, ...) keep their resources in
        `container_name`, which `tf.Session.reset(target, [container_name])` clears."""
        if not isinstance(container_name, str):
            raise TypeError(f"container name must be a string, got {container_name!r}")
        old = getattr(self, "_container", "")
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = old

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
        with self._lock:  # names, ids and the op list stay consistent across threads
            self._check_not_finalized()
            op_def = op_def_lib.get_op_def(op_type)
            attrs = dict(attrs or {})
            if getattr(self, "_container", "") and "container" in op_def.attrs and \
                    not attrs.get("container"):
                attrs["container"] = self._container
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
            if self._building_function:  # a function body: outer tensors become its inputs
                inputs = self._capture_inputs(inputs)
            flat_inputs = bind_inputs(self, op_def, name, inputs, attrs)
            out_dtypes = output_dtypes(op_def, name, attrs)
            state = self._state()
            control_inputs = [op for op in state.control_stack
                              if all(t.op is not op for t in flat_inputs)]
            op = Operation(self, op_def, name, flat_inputs, attrs, out_dtypes, control_inputs,
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
            override = getattr(self, "_gradient_overrides", {}).get(op_type)
            if override is not None:
                op._attrs["_gradient_op_type"] = override
            run_shape_fn(op)
            op._connect()
            self._ops_by_name[name] = op
            self._ops.append(op)
        return op

    def _add_imported_op(self, op_type, name, inputs, attrs, control_inputs, device):
        """Adds a deserialized op with its exact name (graph_io uses this)."""
        with self._lock:
            self._check_not_finalized()
            if name in self._ops_by_name:
                raise ValueError(f"Duplicate op name {name!r} in imported graph")
            op_def = op_def_lib.get_op_def(op_type)
            attrs = dict(attrs)
            flat_inputs = bind_inputs(self, op_def, name, inputs, attrs)
            out_dtypes = output_dtypes(op_def, name, attrs)
            op = Operation(self, op_def, name, flat_inputs, attrs, out_dtypes, control_inputs,
                           canonical_name(device), "<imported>")
            run_shape_fn(op)
            op._connect()
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

    @property
    def collections(self):
        return list(self._collections)

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

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The GraphDef of every op (`from_version` is accepted for TF 1.x signature
        compatibility; every op is always included)."""
        from tensorweave.framework import graph_io
        return graph_io.graph_to_graph_def(self, add_shapes=add_shapes)


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
    graph = graph_of(values) if values else get_default_graph()
    with graph.as_default(), graph.name_scope(name if name is not None else default_name) as n:
        yield n


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def container(container_name):
    """`tf.container`: the default graph's container scope (Graph.container)."""
    return get_default_graph().container(container_name)


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


def graph_of(values):
    """The graph to build ops on `values` in (the default graph when there are none)."""
    default = get_default_graph()
    for value in values:
        graph = getattr(value, "graph", None)
        if isinstance(graph, Graph):
            # Inside a cond/while body, values of an enclosing graph are captured by the body:
            # the body stays the graph to build in.
            enclosing = getattr(default, "outer_graph", None)
            while enclosing is not None and enclosing is not graph:
                enclosing = getattr(enclosing, "outer_graph", None)
            return default if enclosing is graph else graph
    return default


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
