"""Function bodies: the private sub-graphs that functional ops (If, While) run.

A FuncGraph is a Graph traced from a Python callable while it is the default graph. Its
arguments are Placeholder ops (`inputs`, in order); its results are Identity ops (`outputs`).
A tensor of an enclosing graph used inside the body is *captured*: the body gets a new
placeholder for it and the outer tensor becomes an extra input of the functional op
(`captured_outer`, aligned with the placeholders after the arguments). Captures go through
every enclosing function, so a body nested two deep sees an outer tensor as an input of both
functional ops.

Variables are the exception. A variable's storage (its VariableV2 ref output) is not captured
as a value but *mirrored*: the body gets its own VariableV2 op naming the same (container,
shared_name), so the runtime binds it to the same storage cell. This is what lets
`tf.assign(v, ...)` and `v.read_value()` inside a branch or loop body update and read the live
variable. Reading a tf.Variable the usual way (`v * 2`) uses its snapshot, an ordinary outer
tensor, which is captured as a value when the functional op starts (as TF 1.x's Enter does), and
gradients flow to the variable through it.

Ops owning a named resource (a lookup table, a queue: stateful, no inputs, `container` and
`shared_name` attrs) are mirrored the same way: a body's `table.lookup(...)` uses the table the
enclosing graph's session initialised, on the resource manager the body runs against.

`targets` are the stateful ops of the body that run even when no output depends on them
(assign, print, assert): a branch's side effects happen exactly when the branch is taken.

A FuncGraph is the value of a "func" attr. graph_io serializes it as its name and its own
GraphDef, whose argument and result ops carry the private attrs `_arg_index` /
`_retval_index` and whose targets carry `_function_target`, so a body survives GraphDef
round trips and the trip to remote workers.
"""
from tensorweave.framework.graph import Graph, Operation, Tensor

ARG_INDEX = "_arg_index"
MIRROR_BY_NAME = "_mirrors_variable_named"  # a mirror of a variable keyed by its op name
RETVAL_INDEX = "_retval_index"
TARGET = "_function_target"
# Stateful ops that are storage or inputs, not effects: never targets of their own.
_NOT_EFFECTS = ("VariableV2", "Placeholder")


def outermost_graph(graph):
    """The graph that holds `graph` (itself unless it is a function body): where variables
    made while a body is traced live, with their variable store and scopes, as TF's
    init_scope lifts them out of control flow."""
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    return graph


def _owns_named_resource(op):
    """True for an op that owns a resource named by its (container, shared_name) attrs: a
    stateful op of no inputs carrying both (HashTableV2, FIFOQueueV2, ...)."""
    return (not op.inputs and op.op_def.is_stateful and "container" in op.attrs and
            "shared_name" in op.attrs)


class FuncGraph(Graph):
    """The body of one function; the default graph while its Python callable is traced."""

    def __init__(self, name, outer_graph=None):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self._building_function = outer_graph is not None
        self.inputs = []           # argument placeholders, then capture placeholders
        self.num_args = 0
        self.outputs = []
        self.outputs_ops = frozenset()  # the Identity result ops, for the runtime
        self.targets = []
        self.captured_outer = []   # outer-graph tensors behind the capture placeholders
        self._captures = {}        # captured tensor (any enclosing graph) -> its placeholder
        self.mirrored_variables = []  # the original VariableV2 ops mirrored here
        self.mirrored_resources = []  # the original table (queue, ...) ops mirrored here
        self._mirrors = {}
        self.outer_control_inputs = []
        if outer_graph is not None:
            self.seed = outer_graph.seed

    # --- building -------------------------------------------------------------------------------
    def add_argument(self, dtype, shape, name):
        """A new argument placeholder (arguments come before any capture)."""
        if self._captures:
            raise AssertionError("FuncGraph: arguments must be added before any capture")
        tensor = self._placeholder(dtype, shape, name)
        self.num_args += 1
        return tensor

    def _placeholder(self, dtype, shape, name):
        op = self.create_op("Placeholder", [], {"dtype": dtype, "shape": shape}, name=name)
        op._set_attr(ARG_INDEX, len(self.inputs))
        self.inputs.append(op.outputs[0])
        return op.outputs[0]

    def add_unused_inputs(self, like, after):
        """Placeholders (of the dtypes and shapes of `like`) the body ignores, after or before
        its inputs: both branches of a cond take every tensor either branch captured."""
        own = list(self.inputs)
        building, self._building_function = self._building_function, True
        with self.as_default():
            unused = [self._placeholder(t.dtype, t.shape, f"unused_{i}")
                      for i, t in enumerate(like)]
        self._building_function = building
        self.inputs = own + unused if after else unused + own
        for index, tensor in enumerate(self.inputs):
            tensor.op._set_attr(ARG_INDEX, index)

    def _is_enclosing(self, graph):
        outer = self.outer_graph
        while outer is not None:
            if outer is graph:
                return True
            outer = getattr(outer, "outer_graph", None)
        return False

    def _capture_inputs(self, inputs):
        return [[self.capture(t) for t in value] if isinstance(value, (list, tuple))
                else self.capture(value) for value in inputs]

    def capture(self, tensor):
        """The body's stand-in for `tensor` of an enclosing graph (itself if it is local)."""
        if not isinstance(tensor, Tensor) or tensor.graph is self:
            return tensor
        if not self._is_enclosing(tensor.graph):
            return tensor  # bind_inputs reports the foreign graph, naming the op
        if tensor.op.type == "VariableV2":
            return self._mirror_variable(tensor.op)
        if _owns_named_resource(tensor.op):
            return self._mirror_resource(tensor.op)
        found = self._captures.get(tensor)
        if found is None:
            outer = tensor if tensor.graph is self.outer_graph else \
                self.outer_graph.capture(tensor)
            base = tensor.op.name.replace("/", "_")
            found = self._placeholder(tensor.dtype, tensor.shape, f"capture/{base}")
            self._captures[tensor] = found
            self.captured_outer.append(outer)
        return found

    def _mirror_variable(self, variable_op):
        original = getattr(variable_op, "_mirror_of", variable_op)
        mirror = self._mirrors.get(original)
        if mirror is None:
            outer = self.outer_graph
            if isinstance(outer, FuncGraph) and original.graph is not outer:
                outer._mirror_variable(original)  # so every enclosing op colocates with it
            attrs = {"shape": original.get_attr("shape"), "dtype": original.get_attr("dtype"),
                     "container": original.get_attr("container"),
                     "shared_name": original.get_attr("shared_name") or original.name}
            mirror = self.create_op("VariableV2", [], attrs, name=original.name)
            if not original.get_attr("shared_name"):
                mirror._set_attr(MIRROR_BY_NAME, True)
            mirror._mirror_of = original
            self._mirrors[original] = mirror
            self.mirrored_variables.append(original)
        return mirror.outputs[0]

    def _mirror_resource(self, resource_op):
        """The body's own op owning the same (container, shared_name) resource as
        `resource_op` (a table, a queue): its handle names, where the body runs, the resource
        the enclosing graph's op made and initialised, not a value captured at call time."""
        original = getattr(resource_op, "_mirror_of", resource_op)
        mirror = self._mirrors.get(original)
        if mirror is None:
            outer = self.outer_graph
            if isinstance(outer, FuncGraph) and original.graph is not outer:
                outer._mirror_resource(original)
            attrs = {key: value for key, value in original.attrs.items()
                     if not key.startswith("_")}
            attrs["shared_name"] = attrs["shared_name"] or original.name
            mirror = self.create_op(original.type, [], attrs, name=original.name)
            mirror._mirror_of = original
            self._mirrors[original] = mirror
            self.mirrored_resources.append(original)
        return mirror.outputs[0]

    def control_dependencies(self, control_inputs):
        """Control inputs from enclosing graphs become control inputs of the functional op."""
        if control_inputs is None:
            return super().control_dependencies(None)
        local = []
        for item in control_inputs:
            op = item
            if hasattr(op, "_as_graph_element") and not isinstance(op, (Tensor, Operation)):
                op = op._as_graph_element()
            if isinstance(op, Tensor):
                op = op.op
            if isinstance(op, Operation) and op.graph is not self and \
                    self._is_enclosing(op.graph):
                self._depend_outside(op)
            else:
                local.append(item)
        return super().control_dependencies(local)

    def _depend_outside(self, op):
        if op.graph is self.outer_graph:
            if op not in self.outer_control_inputs:
                self.outer_control_inputs.append(op)
        else:
            self.outer_graph._depend_outside(op)

    def finish(self, outputs, run_effects=True):
        """Makes `outputs` (tensors of this graph, or outer ones to capture) the results; with
        `run_effects`, every stateful op of the body becomes a target."""
        self.outputs = []
        for index, tensor in enumerate(outputs):
            op = self.create_op("Identity", [tensor], name=f"output_{index}")
            op._set_attr(RETVAL_INDEX, index)
            self.outputs.append(op.outputs[0])
        self.outputs_ops = frozenset(t.op for t in self.outputs)
        self.targets = []
        if run_effects:
            for op in self.get_operations():
                if op.op_def.is_stateful and op.type not in _NOT_EFFECTS:
                    op._set_attr(TARGET, True)
                    self.targets.append(op)
        self._building_function = False
        return self

    def prefix_mirrored_variables(self, prefix):
        """import_graph_def under scope `prefix` renamed the variables this body (and the
        bodies inside it) mirror by name: follow them."""
        for op in self.get_operations():
            if op._attrs.get(MIRROR_BY_NAME):
                op._attrs["shared_name"] = prefix + op._attrs["shared_name"]
            for value in op._attrs.values():
                if isinstance(value, FuncGraph):
                    value.prefix_mirrored_variables(prefix)

    # --- serialization --------------------------------------------------------------------------
    @classmethod
    def from_graph_def(cls, graph_def, name):
        """The function a GraphDef written by graph_io (a "func" attr) describes."""
        from tensorweave.framework import graph_io
        func = cls(name)
        with func.as_default():
            graph_io.import_graph_def(graph_def, name="")
        inputs, outputs = {}, {}
        for op in func.get_operations():
            if ARG_INDEX in op._attrs:
                inputs[op.get_attr(ARG_INDEX)] = op.outputs[0]
            if RETVAL_INDEX in op._attrs:
                outputs[op.get_attr(RETVAL_INDEX)] = op.outputs[0]
            if op._attrs.get(TARGET):
                func.targets.append(op)
        func.inputs = [inputs[i] for i in range(len(inputs))]
        func.outputs = [outputs[i] for i in range(len(outputs))]
        func.outputs_ops = frozenset(t.op for t in func.outputs)
        func.num_args = len(func.inputs)  # the caller's view: every input is an argument
        return func

    def __repr__(self):
        return (f"<FuncGraph {self.name!r}: {len(self.inputs)} inputs, {len(self.outputs)} "
                f"outputs, {len(self.get_operations())} ops>")
