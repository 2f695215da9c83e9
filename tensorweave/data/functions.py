"""User functions of map, filter and interleave, run on NumPy elements.

A function written with Tensor ops (`lambda x: tf.cast(x, tf.float32) / 255.`) is traced once
into a private Graph whose placeholders stand for the element's components, and each call runs
that graph through a private Session's callable on the component arrays. A function that cannot
be traced because it needs concrete values (it calls NumPy on its arguments, or branches on them)
is run directly on the NumPy components instead; its outputs then have known rank but unknown
dimensions, since only a run shows them.

A traced function whose ops are all elementwise (and that reads no state) is *vectorizable*:
`map(f).batch(n)` then runs f once per batch on the stacked components instead of n times,
which gives the same values (elementwise ops commute with stacking).

Limits: a traced function runs in a graph and session of its own (a function body of the
graph that builds the pipeline): tensors of that graph it uses are captured, which works for
constants (folded in when traced); a variable, or a tensor whose value only a session knows,
is refused with an error saying how to pass it instead.
"""
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
from tensorweave.runtime.session import Session

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


def _call(fn, args, spec):
    """Calls `fn` on an element: a plain tuple is unpacked into positional arguments (as TF)."""
    if type(spec) is tuple:
        return fn(*args)
    return fn(args)


def _output_nest(result):
    """The function's result as an element nest (a returned list is read as a tuple)."""
    if isinstance(result, list):
        return tuple(_output_nest(item) for item in result)
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return tuple(_output_nest(item) for item in result)
    if isinstance(result, dict):
        return {key: _output_nest(value) for key, value in result.items()}
    return result


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
        graph = function_graph.FuncGraph("tf_data_function", outer_graph=self._outer)
        in_specs = structure.flatten(self._input_spec)
        with graph.as_default():
            placeholders = [array_ops.placeholder(
                spec.dtype, _batched_shape(spec.shape) if batched else spec.shape,
                name=f"arg{index}") for index, spec in enumerate(in_specs)]
            args = structure.pack_as(self._input_spec, placeholders)
            try:
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
        graph._building_function = False
        captured = self._captured_constants(graph)
        session = Session(graph=graph)
        feed_runner = session.make_callable(list(outputs), feed_list=placeholders + [
            placeholder for placeholder, _ in captured])
        constants = tuple(value for _, value in captured)
        runner = (lambda *flat: feed_runner(*flat, *constants)) if constants else feed_runner
        if batched:
            self._batched = (runner, session)
            return
        self._graph, self._session, self._runner = graph, session, runner
        if self._returns_dataset:
            self.output_spec = result.element_spec
        else:
            self.output_spec = structure.pack_as(
                result, [TensorSpec(t.shape, t.dtype) for t in outputs])
            self.vectorizable = _is_elementwise(graph, placeholders, outputs)
        self._wrap_strings = [t.dtype is dtypes.string for t in outputs]

    def _captured_constants(self, graph):
        """(placeholder, value) for each tensor of the pipeline's graph the function uses: it
        runs in a session of its own, so only values known now (constants) can go in."""
        if graph.mirrored_variables:
            raise ValueError(f"{self._describe()} uses variable "
                             f"{graph.mirrored_variables[0].name} of the graph that builds the "
                             "pipeline; tf.data functions run in a graph of their own here: "
                             "pass the value through the dataset instead.")
        pairs = []
        for outer, placeholder in zip(graph.captured_outer, graph.inputs):
            value = tensor_util.constant_value(outer)
            if value is None and outer.op.op_def.is_stateful:
                raise ValueError(f"{self._describe()} uses {outer.name}, the output of the "
                                 f"stateful op {outer.op.type} (a table, variable or queue of "
                                 "the pipeline's graph). Those live in the session that runs "
                                 "that graph, while tf.data functions run in a session of their "
                                 "own here: apply it to the iterator's get_next() instead.")
            if value is None:
                raise ValueError(f"{self._describe()} uses {outer.name} of the graph that "
                                 "builds the pipeline, whose value is not a constant; tf.data "
                                 "functions run in a graph of their own here, so only constants "
                                 "can be captured: compute it inside the function or pass it "
                                 "through the dataset (e.g. zip with from_tensors(v).repeat()).")
            pairs.append((placeholder, np.asarray(value)))
        return pairs

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

    # --- calling -----------------------------------------------------------------------------------
    def __call__(self, flat):
        """Runs the function on one element's components; returns the output components (for a
        dataset-returning function: the Dataset and its captured values)."""
        if self.mode == "graph":
            values = self._runner(*flat)
            if self._returns_dataset:
                return self._dataset, values
            return tuple([_as_array(value, wrap) for value, wrap in
                          zip(values, self._wrap_strings)])
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
        """Runs a vectorizable function once on stacked components."""
        if self._batched is None:
            self._trace(batched=True)
        values = self._batched[0](*flat_batch)
        return tuple([_as_array(value, wrap) for value, wrap in
                      zip(values, self._wrap_strings)])


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
