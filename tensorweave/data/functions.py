"""User functions of map, filter and interleave, run on NumPy elements.

A function written with Tensor ops (`lambda x: tf.cast(x, tf.float32) / 255.`) is traced once
into a function body (framework/function_graph.FuncGraph) of the graph that builds the
pipeline, whose placeholders stand for the element's components. Each call runs that body
(runtime/functions.py) on the component arrays against the resource manager and device of the
iterator op that reads the pipeline: the step context its kernel was given, made to outlive
the step (kernels/dataset.py), reached through the IterationContext (`bind(ctx)`). So a table
or a variable of the pipeline's graph used inside the function (the NMT tutorial's
`src.map(lambda s: vocab_table.lookup(s))`) is the one the user's session initialised, on the
task that holds the iterator: the body mirrors it (a table, like a variable, is named by its
container and shared name), it is never copied. Variables are read when the function runs,
so an element made after an assign sees the new value. Those resources outlive steps, so the
iterator's prefetch and parallel-map threads can run the function between steps.

A function that cannot be traced because it needs concrete values (it calls NumPy on its
arguments, or branches on them) is run directly on the NumPy components instead; its outputs
then have known rank but unknown dimensions, since only a run shows them.

A traced function whose ops are all elementwise (and that reads no state) is *vectorizable*:
`map(f).batch(n)` then runs f once per batch on the stacked components instead of n times,
which gives the same values (elementwise ops commute with stacking).

Limits: other tensors of the pipeline's graph the function uses are captured as values, known
when traced: constants work; a tensor whose value only a session knows (a placeholder, a
computed tensor) is refused with an error saying how to pass it instead. A pipeline read
without an iterator op (`as_numpy_iterator`) has no session: its functions run against a
private resource manager, and one that uses a table or variable is refused with an error
saying to read the dataset through an iterator; so are group_by_window's and
bucket_by_sequence_length's key and window-size functions, which are called without the
pipeline's context. A table or variable explicitly on another task than the iterator cannot be
reached (iterator_ops.py refuses it when the iterator is made).
"""
import itertools
import types
import warnings

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import function_graph
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.data import structure
from tensorweave.data.structure import TensorSpec
from tensorweave.ops import array_ops
from tensorweave.runtime import cancellation
from tensorweave.runtime import resources
from tensorweave.runtime import scheduler

# Ops that act element by element (with NumPy broadcasting) and read no state.
_ELEMENTWISE = frozenset("""
Abs Neg Square Sqrt Rsqrt Exp Expm1 Log Log1p Tanh Sigmoid Reciprocal Sin Cos Floor Ceil Round
Sign Relu Cast Identity StopGradient LogicalNot
Add Sub Mul RealDiv FloorDiv FloorMod Pow Maximum Minimum SquaredDifference Equal NotEqual Less
LessEqual Greater GreaterEqual LogicalAnd LogicalOr SelectV2
""".split())
# Errors that mean "this function wants concrete values": Tensor.__array__/__bool__ raise
# TypeError, NumPy-only methods raise AttributeError.
_NEEDS_VALUES = (TypeError, AttributeError, NotImplementedError)
# Each body's ops get a scope of their own: per-op state kept by op name (a random op's
# generator) must not be shared with the outer graph's or another function's op of that name.
_SCOPES = itertools.count()
_LOCAL_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def _call(fn, args, spec):
    """Calls `fn` on an element: a plain tuple is unpacked into positional arguments (as TF)."""
    if type(spec) is tuple:
        return fn(*args)
    return fn(args)


def _output_nest(result):
    """The function's result as an element nest. As in TF, only a list returned at the top
    (often a py_func's outputs) is read as a tuple; a list inside the nest is one component, its
    tensors stacked (`{"x": parsed_csv_columns[:-1]}` is one [4] feature)."""
    if isinstance(result, list):
        return tuple(result)
    return result


class _DatasetFunctionGraph(function_graph.FuncGraph):
    """A dataset function's body. As in TF, it captures the variables it reads, not their
    values: a read of a pipeline graph's variable (its snapshot, `v * 2`) becomes a read of the
    body's mirror, made each time the body runs, so elements see the variable's value at that
    time (e.g. after an assign), never the value at tracing or at the iterator's start."""

    def capture(self, tensor):
        if (isinstance(tensor, graph_lib.Tensor) and tensor.graph is not self and
                tensor.op.type == "Identity" and tensor.op.inputs[0].op.type == "VariableV2"
                and self._is_enclosing(tensor.graph)):
            reads = self.__dict__.setdefault("_variable_reads", {})
            if tensor not in reads:
                storage = self.capture(tensor.op.inputs[0])
                reads[tensor] = self.create_op("Identity", [storage], name="read").outputs[0]
            return reads[tensor]
        return super().capture(tensor)


class StructuredFunction:
    """`fn` over elements of `input_spec`: call(flat components) -> flat output components."""

    def __init__(self, fn, input_spec, transformation, returns_dataset=False):
        if not callable(fn):
            raise TypeError(f"{transformation}(): expected a function, got {type(fn).__name__}")
        self._fn = fn
        self._input_spec = input_spec
        self._transformation = transformation
        self._returns_dataset = returns_dataset
        self._batched = None
        self._private_call = None
        self.vectorizable = False
        self._outer = graph_lib.get_default_graph()  # where the pipeline is built
        try:
            self._trace()
            self.mode = "graph"
        except _NEEDS_VALUES as trace_error:
            self.mode = "numpy"
            self._infer_numpy_outputs(trace_error)

    # --- tracing ---------------------------------------------------------------------------------
    def _trace(self, batched=False):
        # A function body of the pipeline's graph: its tensors used inside are captured.
        graph = _DatasetFunctionGraph("tf_data_function", outer_graph=self._outer)
        in_specs = structure.flatten(self._input_spec)
        with graph.as_default():
            placeholders = [graph.add_argument(
                spec.dtype, _batched_shape(spec.shape) if batched else spec.shape,
                f"arg{index}") for index, spec in enumerate(in_specs)]
            args = structure.pack_as(self._input_spec, placeholders)
            try:
                with graph.name_scope(f"fn{next(_SCOPES)}"):
                    result = _output_nest(_call(self._fn, args, self._input_spec))
            except ValueError as exc:
                if "different graph" in str(exc) or "not an element of this graph" in str(exc):
                    raise ValueError(f"{self._describe()} uses a tensor of another graph: "
                                     f"{exc}. Functions of tf.data transformations are traced "
                                     "into their own graph; create the tensors they need "
                                     "inside the function or pass NumPy values.") from None
                raise
            if self._returns_dataset:
                outputs = self._dataset_outputs(result, graph)
            else:
                outputs = [self._as_tensor(leaf, graph) for leaf in structure.flatten(result)]
        graph.finish(outputs)
        body = _Body(graph, self._captured_constants(graph), self._describe())
        if batched:
            self._batched = body
            return
        self._graph, self._body = graph, body
        if self._returns_dataset:
            self.output_spec = result.element_spec
        else:
            self.output_spec = structure.pack_as(
                result, [TensorSpec(t.shape, t.dtype) for t in outputs])
            self.vectorizable = _is_elementwise(graph, placeholders, outputs)
        self._wrap_strings = [t.dtype is dtypes.string for t in outputs]

    def _captured_constants(self, graph):
        """The values of the tensors of the pipeline's graph the function captures (inputs of
        its body after the arguments): only values known now (constants) can go in. Tables and
        variables are not captured but mirrored (they resolve where the body runs)."""
        values = []
        for outer in graph.captured_outer:
            value = tensor_util.constant_value(_origin(outer))
            if value is None and outer.op.op_def.is_stateful:
                raise ValueError(f"{self._describe()} uses {outer.name}, the output of the "
                                 f"stateful op {outer.op.type} of the pipeline's graph, whose "
                                 "value is only known when a session runs that op: compute it "
                                 "inside the function, or apply it to the iterator's "
                                 "get_next() instead.")
            if value is None:
                raise ValueError(f"{self._describe()} uses {outer.name} of the graph that "
                                 "builds the pipeline, whose value is not a constant; tf.data "
                                 "functions capture values when traced, so only constants "
                                 "can be captured: compute it inside the function or pass it "
                                 "through the dataset (e.g. zip with from_tensors(v).repeat()).")
            values.append(np.asarray(value))
        return values

    def _as_tensor(self, leaf, graph):
        if hasattr(leaf, "_element_spec"):
            raise TypeError(f"{self._describe()} returned a Dataset; use interleave() or "
                            "flat_map() for functions that return datasets.")
        # ValueError, not TypeError: a TypeError would send the function to NumPy mode.
        structure.check_dense(leaf, f"{self._describe()} returned a value that", ValueError)
        tensor = convert_to_tensor(leaf)
        if tensor.graph is self._outer:  # returned as is: an output of the body captures it
            tensor = array_ops.identity(tensor)
        if tensor.graph is not graph:
            raise ValueError(f"{self._describe()} returned {tensor.name}, a tensor of another "
                             "graph; functions of tf.data transformations are traced into their "
                             "own graph: build what they return inside them.")
        return tensor

    def _dataset_outputs(self, result, graph):
        if not hasattr(result, "_element_spec"):
            raise TypeError(f"{self._describe()} must return a Dataset, got "
                            f"{type(result).__name__}")
        self._dataset = result
        for tensor in result._captures():
            if tensor.graph is not graph:
                raise ValueError(f"{self._describe()} returned a dataset capturing "
                                 f"{tensor.name} of another graph.")
        return result._captures()

    def _describe(self):
        name = getattr(self._fn, "__name__", type(self._fn).__name__)
        return f"The function {name!r} given to {self._transformation}()"

    # --- NumPy mode ------------------------------------------------------------------------------
    def _infer_numpy_outputs(self, trace_error):
        """Learns the output structure by calling the function on zeros of the input spec."""
        dummies = [_dummy(spec) for spec in structure.flatten(self._input_spec)]
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = _output_nest(_call(self._fn, structure.pack_as(
                    self._input_spec, dummies), self._input_spec))
        except Exception as exc:
            raise TypeError(f"{self._describe()} could not be traced with Tensors "
                            f"({type(trace_error).__name__}: {trace_error}) nor run on NumPy "
                            f"values ({type(exc).__name__}: {exc}).") from exc
        if self._returns_dataset:
            if not hasattr(result, "_element_spec"):
                raise TypeError(f"{self._describe()} must return a Dataset, got "
                                f"{type(result).__name__}")
            self.output_spec = result.element_spec
            return
        specs = []
        for leaf in structure.flatten(result):
            array = structure.normalize_value(leaf)
            if isinstance(array, graph_lib.Tensor):
                raise TypeError(f"{self._describe()} mixes Tensors and NumPy values; write it "
                                "with Tensor ops only, or NumPy only.")
            specs.append(TensorSpec(tensor_shape.unknown_shape(np.ndim(array)),
                                    dtypes.as_dtype(array.dtype)))
        self.output_spec = structure.pack_as(result, specs)

    def resources(self):
        """(the pipeline graph's tables and variables it uses, the dataset it returns)."""
        if self.mode != "graph":
            return [], None
        graph = self._graph
        return (graph.mirrored_resources + graph.mirrored_variables,
                self._dataset if self._returns_dataset else None)

    # --- calling -----------------------------------------------------------------------------------
    def bind(self, ctx):
        """`call(flat)`: this function for one instantiation of the pipeline (its
        IterationContext), running against the iterator's resource manager and device."""
        if self.mode != "graph":
            return self._call_numpy
        run = self._body.runner(ctx.runtime)
        if self._returns_dataset:
            return lambda flat: (self._dataset, run(flat))
        return self._arrays(run)

    def bind_batched(self, ctx):
        """`call(flat_batch)` running a vectorizable function once on stacked components."""
        if self._batched is None:
            self._trace(batched=True)
        return self._arrays(self._batched.runner(ctx.runtime))

    def _arrays(self, run):
        wraps = self._wrap_strings
        return lambda flat: tuple([_as_array(value, wrap) for value, wrap in
                                   zip(run(flat), wraps)])

    def __call__(self, flat):
        """The function on one element outside any iterator: its output components (for a
        dataset-returning function: the Dataset and its captured values)."""
        if self._private_call is None:
            self._private_call = self.bind(_NO_SESSION)
        return self._private_call(flat)

    def _call_numpy(self, flat):
        result = _output_nest(_call(self._fn, structure.pack_as(self._input_spec, flat),
                                    self._input_spec))
        if self._returns_dataset:
            return result, ()
        if structure.is_nested(self.output_spec) and not structure.same_structure(
                self.output_spec, result):
            raise TypeError(f"{self._describe()} returned {result!r}, which does not have the "
                            f"structure it returned before ({self.output_spec})")
        leaves = structure.flatten(result) if structure.is_nested(self.output_spec) else [result]
        return tuple(structure.to_component(leaf, spec, self._describe()) for leaf, spec in
                     zip(leaves, structure.flatten(self.output_spec)))

    def call_batched(self, flat_batch):
        """Runs a vectorizable function once on stacked components, outside any iterator."""
        return self.bind_batched(_NO_SESSION)(flat_batch)


class _Body:
    """A traced function body and the constants it captured, run by runtime/functions.py."""

    def __init__(self, graph, constants, description):
        self.graph = graph
        self.constants = list(constants)
        self.description = description
        self.arg_dtypes = [t.dtype for t in graph.inputs[:graph.num_args]]
        mirrored = graph.mirrored_resources + graph.mirrored_variables
        self.uses_state = mirrored[0].name if mirrored else None

    def runner(self, runtime):
        """`run(flat) -> outputs` within `runtime` (a step context outliving its step)."""
        if runtime is None:
            if self.uses_state is not None:
                raise ValueError(
                    f"{self.description} uses {self.uses_state}, a table or variable of the "
                    "pipeline's graph, which only a session holds, and it runs without one "
                    "here: read this dataset through an iterator (make_initializable_iterator "
                    "/ make_one_shot_iterator) run in the session that initialises it. (The "
                    "key and window-size functions of group_by_window and "
                    "bucket_by_sequence_length always run without one: apply the table to "
                    "the elements in a map() before them.)")
            runtime = _PRIVATE_RUNTIME
        run = runtime.function(self.graph)
        constants, arg_dtypes = self.constants, self.arg_dtypes
        return lambda flat: run([_as_input(value, dtype) for value, dtype in
                                 zip(flat, arg_dtypes)] + constants)


# Outside any iterator: no session's runtime, so stateless bodies only (_Body.runner).
_NO_SESSION = types.SimpleNamespace(runtime=None)
_PRIVATE_RUNTIME = scheduler.StepContext(None, _LOCAL_CPU, None, cancellation.CancellationToken(),
                                         resources.ResourceManager())


def _as_input(value, dtype):
    """An element component as the body's argument expects it (as a Session feed would)."""
    if isinstance(value, np.ndarray) and value.dtype == dtype.np_dtype:
        return value
    if dtype is dtypes.string:
        return tensor_util.to_numpy(np.asarray(value), dtypes.string)
    return np.asarray(value, dtype=dtype.np_dtype)


def _origin(tensor):
    """The tensor a capture placeholder of an enclosing function body (a dataset function
    built inside flat_map's function) stands for; `tensor` itself otherwise."""
    graph = tensor.graph
    while isinstance(graph, function_graph.FuncGraph) and tensor in graph.inputs[graph.num_args:]:
        tensor = graph.captured_outer[graph.inputs.index(tensor) - graph.num_args]
        graph = tensor.graph
    return tensor


def _batched_shape(shape):
    if shape.ndims is None:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([None] + shape.as_list())


def _as_array(value, wrap_string):
    if wrap_string and not isinstance(value, np.ndarray):
        return np.array(value, dtype=object)
    return value


def _dummy(spec):
    dims = [1 if d is None else d for d in (spec.shape.as_list() if spec.shape.ndims is not None
                                            else [])]
    if spec.dtype is dtypes.string:
        return np.full(dims, b"", dtype=object)
    return np.zeros(dims, dtype=spec.dtype.np_dtype)


def _is_elementwise(graph, placeholders, outputs):
    """True if stacking inputs along a new first axis stacks every output the same way."""
    element_rank = {}  # tensor -> rank of its per-element value, for batch-carrying tensors
    for tensor in placeholders:
        if tensor.shape.ndims is None:
            return False
        element_rank[tensor] = tensor.shape.ndims
    for op in graph.get_operations():
        if op.type in ("Placeholder", "Const"):
            continue
        if op.type not in _ELEMENTWISE:
            return False
        carried = [t for t in op.inputs if t in element_rank]
        if not carried:
            continue  # computed from constants only: the same for every element
        ranks = {element_rank[t] for t in carried}
        if len(ranks) != 1:
            return False
        rank = ranks.pop()
        for tensor in op.inputs:
            if tensor not in element_rank and (tensor.shape.ndims is None or
                                               tensor.shape.ndims > rank):
                return False  # would broadcast against the batch axis
        out = op.outputs[0]
        if out.shape.ndims != rank:
            return False
        element_rank[out] = rank
    return all(t in element_rank for t in outputs)
