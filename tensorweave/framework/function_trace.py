"""`tf.function` and `tf.compat.v1.wrap_function` in graph mode, as TF 1.15 runs them.

Calling a `Function` from a graph traces the Python function into a FuncGraph (the arguments
become its placeholders, the tensors it reads from the graph become captures) and adds one
call op, StatefulPartitionedCall (PartitionedCall when the body has no stateful op), whose
"f" attr is that body. A trace is kept per graph and per *signature*: the dtypes and static
shapes of the tensor arguments plus the values of the other (Python) arguments, so a second
call with tensors of the same dtypes and shapes reuses the body (the Python function does not
run again) and a call with another shape, or another Python value, traces once more (with
experimental_relax_shapes, a second shape of the same rank traces once with unknown
dimensions, which then serves every shape of that rank). With an
`input_signature` every call converts its arguments to those specs and there is one trace per
graph.

Variables: a body may create variables on its first trace only (they live in the enclosing
graph, as TF's init_scope lifts them); a later trace that would create one raises ValueError,
as TF does, since each trace would otherwise make a fresh set. The body's stateful ops (assign,
print, assert) run on every call whether or not an output depends on them.

Limit: inside a body, tf.gradients (hence Optimizer.minimize) cannot reach variables of
the enclosing graph: the body reads them through captured values. Compute the loss with the
function and differentiate or minimize outside it: gradients flow through the call op to the
variables (ops/function_call_ops.py).

Outputs keep the Python structure the function returned; an Operation in it stands for "ran"
and comes back as the call op; None and other Python values come back unchanged.
The gradient of a call is a call of the body's gradient function (ops/function_call_ops.py).
"""
import functools
import re
import weakref

from tensorweave.framework import dtypes
from tensorweave.framework import nest
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.function_graph import FuncGraph, outermost_graph
from tensorweave.framework.graph import GraphKeys, Operation, Tensor, get_default_graph

_VARIABLE_KEYS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES)
# Set by tensorweave.autograph: converts a Python function's tensor-dependent control flow.
_CONVERTER = {"convert": None}
# tf.config.run_functions_eagerly(True): a call runs the Python function inline, building its
# ops into the calling graph on every call (no trace, no call op) - easier to debug, as in TF.
_RUN_INLINE = [False]


def run_functions_inline(enabled):
    _RUN_INLINE[0] = bool(enabled)


def functions_run_inline():
    return _RUN_INLINE[0]


def register_converter(convert):
    _CONVERTER["convert"] = convert


def _is_tensor_like(value):
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element") or \
        type(value).__module__ == "numpy"


def _variable_count(graph):
    return sum(len(graph.get_collection(key)) for key in _VARIABLE_KEYS)


def _op_name(name):
    """`name` as a valid op name ("<lambda>" -> "lambda")."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name).lstrip("_-") or "function"


def _match_signature(signature, args):
    """The argument values paired with the leaves of `signature` (a spec takes a whole
    argument, a list of lists as its own value, as TF matches them)."""
    if nest.is_nested(signature):
        if not nest.is_nested(args) or len(args) != len(signature):
            raise ValueError(f"the arguments {args!r} do not match the input_signature "
                             f"{signature!r}")
        return [leaf for sub, arg in zip(signature, args) for leaf in
                _match_signature(sub, arg)]
    return [args]


def _spec_of(spec):
    shape = tensor_shape.as_shape(getattr(spec, "shape", None))
    return dtypes.as_dtype(spec.dtype), shape


class ConcreteFunction:
    """One trace: its FuncGraph, the structure of its arguments and results, and the call."""

    def __init__(self, func_graph, arg_structure, outputs_structure, leaves, name):
        self.graph = func_graph
        self.name = name
        self.structured_input_signature = arg_structure
        self.structured_outputs = outputs_structure
        self._leaves = leaves   # the body's result leaves: Tensor, Operation or Python value
        self.op_type = "StatefulPartitionedCall" if func_graph.targets or any(
            op.op_def.is_stateful for op in func_graph.get_operations()
            if op.type not in ("Placeholder",)) else "PartitionedCall"

    @property
    def inputs(self):
        return list(self.graph.inputs)

    @property
    def outputs(self):
        return list(self.graph.outputs)

    @property
    def captured_inputs(self):
        return list(self.graph.captured_outer)

    def prune(self, feeds, fetches, name=None, input_signature=None):
        """A ConcreteFunction computing `fetches` (tensors or names of this body) from
        `feeds` (its arguments, in order): how a v1 graph wrapped by wrap_function is cut
        down to one signature. Captures of this body stay captures."""
        from tensorweave.framework import function_graph, graph_io
        body = self.graph
        feed_list = [body.as_graph_element(f) for f in nest.flatten(feeds)]
        fetch_list = [body.as_graph_element(f) for f in nest.flatten(fetches)]
        pruned = FuncGraph(_op_name(name or f"{self.name}_pruned"), body.outer_graph)
        with pruned.as_default():
            args = [pruned.add_argument(t.dtype, t.shape, f"arg_{i}")
                    for i, t in enumerate(feed_list)]
            input_map = {t.name: arg for t, arg in zip(feed_list, args)}
            for placeholder, outer in zip(body.inputs[body.num_args:], body.captured_outer):
                input_map.setdefault(placeholder.name, pruned.capture(outer))
            before = len(pruned.get_operations())
            results = graph_io.import_graph_def(
                body.as_graph_def(), input_map=input_map,
                return_elements=[t.name for t in fetch_list if isinstance(t, Tensor)],
                name="body")
            for op in pruned.get_operations()[before:]:  # copies, not this body's signature
                for attr in (function_graph.ARG_INDEX, function_graph.RETVAL_INDEX,
                             function_graph.TARGET):
                    op._attrs.pop(attr, None)
            pruned.finish(results, run_effects=False)
        outputs = nest.pack_sequence_as(fetches, results) if nest.is_nested(fetches) else \
            results[0]
        return ConcreteFunction(pruned, feeds, outputs, list(results), pruned.name)

    def __call__(self, *args):
        """Calls the body on tensors, one per argument placeholder (flattened, in order)."""
        flat = [a for a in nest.flatten(list(args))]
        if len(flat) != self.graph.num_args:
            raise TypeError(f"ConcreteFunction {self.name}: takes {self.graph.num_args} tensor "
                            f"arguments, got {len(flat)}")
        tensors = []
        for index, (value, placeholder) in enumerate(zip(flat, self.graph.inputs)):
            tensor = convert_to_tensor(value, dtype=placeholder.dtype)
            if not placeholder.shape.is_compatible_with(tensor.shape):
                raise ValueError(f"ConcreteFunction {self.name}: argument {index} has shape "
                                 f"{tensor.shape}, which the trace's {placeholder.shape} does "
                                 "not accept")
            tensors.append(tensor)
        return self._call_flat(tensors)

    def _call_flat(self, tensors, op_type=None, attrs=None):
        """The call op on `tensors` (one per argument); `op_type` and `attrs` make another
        functional op of the same shape (CriticalSection's)."""
        graph = get_default_graph()
        body = self.graph
        if body.outer_graph is not graph:
            raise ValueError(f"tf.function {self.name}: this trace belongs to another graph; "
                             "call the tf.function itself, which traces for each graph")
        inputs = list(tensors) + list(body.captured_outer)
        with graph.control_dependencies(list(body.outer_control_inputs)), \
                _colocated(graph, body):
            op = graph.create_op(
                op_type or self.op_type, [inputs],
                {"Tout": [t.dtype for t in body.outputs], "f": body,
                 "output_shapes": [t.shape for t in body.outputs], **(attrs or {})},
                name=self.name)
        outputs = iter(op.outputs)
        leaves = [op if isinstance(leaf, Operation) else
                  next(outputs) if isinstance(leaf, Tensor) else leaf for leaf in self._leaves]
        return nest.pack_sequence_as(self.structured_outputs, leaves)


def _colocated(graph, body):
    for variable in body.mirrored_variables:
        if variable.graph is graph:
            return graph.colocate_with(variable)
    return graph.control_dependencies([])


def trace(python_function, args, kwargs, name, specs=None, arg_structure=None, shapes=None):
    """A ConcreteFunction: `python_function(*args, **kwargs)` traced into a new FuncGraph of
    the default graph; tensor-like leaves of the arguments (or all leaves, with `specs`)
    become the body's arguments, of the leaves' shapes unless `shapes` ({leaf index: shape})
    relaxes them."""
    graph = get_default_graph()
    body = FuncGraph(name, graph)
    for key in _VARIABLE_KEYS + (GraphKeys.TRAINABLE_VARIABLES,):  # shared, as TF's FuncGraph
        body._collections[key] = graph.get_collection_ref(key)
    structure = (list(args), dict(kwargs))
    flat = nest.flatten(structure)
    with body.as_default():
        body_leaves = []
        for index, leaf in enumerate(flat):
            if specs is not None:
                dtype, shape = specs[index]
                body_leaves.append(body.add_argument(dtype, shape, f"arg_{index}"))
            elif _is_tensor_like(leaf):
                tensor = convert_to_tensor(leaf) if not isinstance(leaf, Tensor) else leaf
                shape = (shapes or {}).get(index, tensor.shape)
                body_leaves.append(body.add_argument(tensor.dtype, shape, f"arg_{index}"))
            else:
                body_leaves.append(leaf)
        body_args, body_kwargs = nest.pack_sequence_as(structure, body_leaves)
        result = python_function(*body_args, **body_kwargs)
        leaves = []
        for leaf in nest.flatten(result):
            if isinstance(leaf, (Tensor, Operation)) or leaf is None or \
                    isinstance(leaf, (bool, int, float, str)):
                leaves.append(leaf)
            else:
                leaves.append(convert_to_tensor(leaf))
        body.finish([leaf for leaf in leaves if isinstance(leaf, Tensor)])
    return ConcreteFunction(body, arg_structure or structure, result, leaves, name)


class Function:
    """What `@tf.function` returns: a callable that traces per (graph, signature)."""

    def __init__(self, python_function, name=None, input_signature=None, autograph=True,
                 relax_shapes=False):
        if not callable(python_function):
            raise TypeError(f"tf.function: expected a callable, got {python_function!r}")
        self.python_function = python_function
        self._name = _op_name(name or getattr(python_function, "__name__", "function"))
        self.input_signature = None if input_signature is None else list(input_signature)
        self._autograph = autograph
        self._relax_shapes = relax_shapes
        self._traces = weakref.WeakKeyDictionary()  # outer graph -> {signature: concrete}
        self._ranks_seen = weakref.WeakKeyDictionary()  # outer graph -> {rank-only signature}
        self._traced_graphs = weakref.WeakSet()      # graphs with a first trace done
        self._instances = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, python_function)

    def __get__(self, instance, owner):
        """A method: one Function per instance (its traces close over that instance)."""
        if instance is None:
            return self
        try:
            bound = self._instances.get(instance)
        except TypeError:  # unhashable or not weakly referable: keep it on the instance
            bound = getattr(instance, "__dict__", {}).get(f"_tf_function_{id(self)}")
        if bound is None:
            bound = Function(functools.partial(self.python_function, instance), self._name,
                             self.input_signature, self._autograph, self._relax_shapes)
            try:
                self._instances[instance] = bound
            except TypeError:
                if hasattr(instance, "__dict__"):
                    instance.__dict__[f"_tf_function_{id(self)}"] = bound
        return bound

    def _callable(self):
        convert = _CONVERTER["convert"]
        if self._autograph and convert is not None:
            return convert(self.python_function)
        return self.python_function

    def _signature(self, args, kwargs):
        if self.input_signature is not None:
            if kwargs:
                raise TypeError(f"tf.function {self._name}: with an input_signature, pass the "
                                "arguments positionally")
            specs = [_spec_of(s) for s in nest.flatten(self.input_signature)]
            if len(args) != len(self.input_signature):
                raise ValueError(f"tf.function {self._name}: input_signature has "
                                 f"{len(self.input_signature)} arguments, the call passes "
                                 f"{len(args)}")
            flat = _match_signature(self.input_signature, list(args))
            if len(flat) != len(specs):
                raise ValueError(f"tf.function {self._name}: input_signature has {len(specs)} "
                                 f"tensors, the call passes {len(flat)} arguments")
            tensors = []
            for index, (value, (dtype, shape)) in enumerate(zip(flat, specs)):
                tensor = convert_to_tensor(value, dtype=dtype)
                if not shape.is_compatible_with(tensor.shape):
                    raise ValueError(f"tf.function {self._name}: argument {index} has shape "
                                     f"{tensor.shape}, not compatible with the "
                                     f"input_signature's {shape}")
                tensors.append(tensor)
            return ("signature",), (nest.pack_sequence_as(self.input_signature, tensors), {}), \
                specs
        key = []
        for leaf in nest.flatten((list(args), dict(kwargs))):
            if _is_tensor_like(leaf):
                tensor = convert_to_tensor(leaf) if not isinstance(leaf, Tensor) else leaf
                key.append(("tensor", tensor.dtype, tensor.shape.as_tuple()
                            if tensor.shape.ndims is not None else None))
            else:
                try:
                    hash(leaf)
                    key.append(("value", type(leaf), leaf))
                except TypeError:
                    key.append(("object", id(leaf)))
        structure = nest.map_structure(lambda _: None, (list(args), dict(kwargs)))
        return (repr(structure), tuple(key)), (args, kwargs), None

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tensors or TensorSpec-likes), made if missing."""
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(self.input_signature)
        if self.input_signature is None and any(_is_spec(a) for a in nest.flatten(
                (list(args), dict(kwargs)))):
            specs = [_spec_of(a) for a in nest.flatten((list(args), dict(kwargs)))]
            key = ("specs", tuple((d, s.as_tuple() if s.ndims is not None else None)
                                  for d, s in specs))
            return self._lookup(key, lambda: trace(self._callable(), args, kwargs,
                                                   self._name, specs))
        if self.input_signature is not None and all(_is_spec(a) for a in nest.flatten(
                list(args))):
            specs = [_spec_of(s) for s in nest.flatten(self.input_signature)]
            return self._lookup(("signature",), lambda: trace(
                self._callable(), self.input_signature, {}, self._name, specs))
        key, (args, kwargs), specs = self._signature(args, kwargs)
        return self._lookup(key, lambda: trace(self._callable(), args, kwargs, self._name,
                                               specs))

    def _lookup(self, key, make):
        graph = get_default_graph()
        traces = self._traces.setdefault(graph, {})
        concrete = traces.get(key)
        if concrete is None:
            home = outermost_graph(graph)
            before = _variable_count(home)
            concrete = make()
            if _variable_count(home) != before and graph in self._traced_graphs:
                raise ValueError(f"tf.function {self._name} tried to create variables on a "
                                 "call that is not its first trace (a new input signature "
                                 "traces again, and would make a new set). Create the "
                                 "variables outside the function, or only on the first call.")
            self._traced_graphs.add(graph)
            traces[key] = concrete
        return concrete

    def __call__(self, *args, **kwargs):
        if _RUN_INLINE[0]:
            return self.python_function(*args, **kwargs)
        key, (args, kwargs), specs = self._signature(args, kwargs)
        shapes = None
        if self._relax_shapes and specs is None:
            key, shapes = self._relaxed(key)
        concrete = self._lookup(key, lambda: trace(self._callable(), args, kwargs,
                                                   self._name, specs, shapes=shapes))
        flat = nest.flatten((list(args), dict(kwargs)))
        tensors = [leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf)
                   for leaf in flat if specs is not None or _is_tensor_like(leaf)]
        return concrete._call_flat(tensors)

    def _relaxed(self, key):
        """experimental_relax_shapes: the first call of a (dtypes, ranks) signature traces its
        exact shapes; a later call with other shapes of the same ranks traces once with every
        dimension unknown, and that trace serves all such calls. Returns (key, shapes)."""
        traces = self._traces.get(get_default_graph(), {})
        if key in traces:
            return key, None
        structure, leaves = key
        relaxed = tuple(("tensor", item[1], None if item[2] is None else (None,) * len(item[2]))
                        if item[0] == "tensor" else item for item in leaves)
        seen = self._ranks_seen.setdefault(get_default_graph(), set())
        if (structure, relaxed) not in seen:
            seen.add((structure, relaxed))
            return key, None
        shapes = {index: tensor_shape.TensorShape(list(item[2]))
                  for index, item in enumerate(relaxed)
                  if item[0] == "tensor" and item[2] is not None}
        return ("relaxed", structure, relaxed), shapes

    def experimental_get_tracing_count(self):
        return sum(len(traces) for traces in self._traces.values())


def _is_spec(value):
    return hasattr(value, "dtype") and hasattr(value, "shape") and \
        not isinstance(value, Tensor) and not _is_tensor_like(value)


def function(func=None, input_signature=None, autograph=True, experimental_autograph_options=None,
             experimental_relax_shapes=False, experimental_compile=None, name=None, **unused):
    """`tf.function` (decorator or call): see the module docstring."""
    def decorate(python_function):
        return Function(python_function, name=name, input_signature=input_signature,
                        autograph=autograph, relax_shapes=experimental_relax_shapes)
    return decorate if func is None else decorate(func)


def wrap_function(fn, signature, name=None):
    """`tf.compat.v1.wrap_function`: `fn` traced once over `signature` (TensorSpec-likes);
    variables it creates live in the enclosing graph. Returns the ConcreteFunction."""
    specs = [_spec_of(s) for s in nest.flatten(list(signature))]
    return trace(fn, list(signature), {},
                 _op_name(name or getattr(fn, "__name__", "wrapped_function")), specs)
