"""The optional XLA backend: lowerable parts of a partition run as one `jax.jit` function each.

Opt-in, per session, by TF 1.x's knob `ConfigProto.graph_options.optimizer_options.
global_jit_level` (ON_1 or ON_2), or for every local session of the process by the environment
variable TENSORWEAVE_XLA=1 (how a test suite or an unchanged script is run on it; an explicit
OFF still turns it off). Without JAX installed (`pip install 'tensorweave[xla]'`) both are a
no-op, said once in the log.

Clusters, not whole partitions: a partition's queues, Send/Recv, py_funcs, summaries or
random ops would otherwise send the whole step back to NumPy. When a plan is built, an op is a
candidate if it has a JAX lowering (xla_lowerings.py), or its value is known when the cluster is
traced (constants, shapes and pure ops of them: these run their NumPy kernels at trace time).
Each candidate's depth is the largest number of non-candidates on a path from a source to it;
the candidates of one depth that wait on the same values from other partitions (Recvs) form one
cluster. A path between two ops of one depth can only pass through candidates of that depth (a
non-candidate on it would deepen the later op), so a cluster never waits on work that waits on
it, and the plan stays acyclic with each cluster contracted to one node. Grouping by the Recvs
keeps the step acyclic across partitions too: a cluster's outputs then wait on no Recv they did
not wait on already (a sent value made to wait on a value received in return would deadlock
the step), and an op that fails does not wait on another device first. Values known at trace time never cross a cluster's boundary: every
cluster traces its own copies of the constant and shape ops it reads.

Variables: a cluster reads and writes variables through their cells, never through values in
the step: a VariableV2 op read only inside one cluster is absorbed into it. A variable a
cluster updates (Assign, Apply*) stays a JAX buffer on its cell (`VariableCell.device`), passed
to the next compiled step and updated there by donation (no copy per step); anything else
that reads or assigns the cell's value (a NumPy kernel, a fetch, Saver) brings it back first.

A cluster runs its ops' NumPy kernels instead of the compiled function when a variable it reads
is uninitialized, when a label of a sparse cross entropy is out of range, or when tracing
fails for the inputs' shapes (remembered per shape): the NumPy kernels then raise the error
that names the op. The step stats show a cluster as one node of type `_XlaCluster`.
"""
import heapq
import logging
import os

import numpy as np

from tensorweave.kernels import registry as kernel_registry

_log = logging.getLogger(__name__)

CLUSTER_TYPE = "_XlaCluster"
# A jitted call costs ~10-20 us to cross; one lone op gains nothing from compiling.
MIN_CLUSTER_OPS = 2
# Ops with a lowering that run faster on the NumPy path here: compiled by XLA, LeNet's conv
# gradients took 1.1-3.0x and its max-pool gradients 3.4-6.2x the NumPy kernels' time, where
# its forward convolutions took 0.56-0.86x and max pooling 1.0x (a session per op, alternating:
# `python benchmarks/bench_xla.py --ops`, BENCHMARKS.md). So the gradients stay on NumPy and a
# conv net's step compiles around them.
NUMPY_FASTER = frozenset({"Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPoolGrad"})
# Ops whose values are known at trace time whatever their inputs: their NumPy kernels run then
# (np.shape and friends read a tracer's static shape).
ALWAYS_STATIC = frozenset({"Const", "Shape", "Size", "Rank"})
_NON_ARRAY_DTYPES = frozenset({"string", "resource", "variant"})
_TRUE = ("1", "true", "on", "yes")

_backend = {}  # "modules": (jax, lowerings) once imported, or None when JAX is missing


def requested(config=None):
    """True when the session's config asks for the XLA backend (global_jit_level ON_1 or
    ON_2), or leaves it at DEFAULT and TENSORWEAVE_XLA does; OFF is off either way."""
    level = config.graph_options.optimizer_options.global_jit_level if config else 0
    if level != 0:
        return level > 0
    return os.environ.get("TENSORWEAVE_XLA", "").strip().lower() in _TRUE


def backend():
    """(jax, xla_lowerings), or None (logged once) when JAX is not installed."""
    if "modules" not in _backend:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)  # int64 and float64 stay themselves
            from tensorweave.runtime import xla_lowerings
            _backend["modules"] = (jax, xla_lowerings)
        except ImportError as exc:
            _log.warning("XLA was requested (global_jit_level or TENSORWEAVE_XLA) but JAX is not "
                         "installed (%s): running the NumPy kernels; pip install "
                         "'tensorweave[xla]' for the XLA backend", exc)
            _backend["modules"] = None
    return _backend["modules"]


class Cluster:
    """The ops of one partition that run as one compiled function.

    `ops`: its members in plan order (they bind as one node, at the last); `trace_ops`: the
    members and the copies of constant/shape ops they read, in a topological order; `inputs`:
    the tensors it reads from the step; `outputs`: the tensors the step reads from it;
    `variables`: the VariableV2 ops whose cells it reads or writes."""

    def __init__(self, index, ops, trace_ops, inputs, outputs, variables):
        self.ops = ops
        self.trace_ops = trace_ops
        self.inputs = inputs
        self.outputs = outputs
        self.variables = variables
        self.name = f"xla_cluster_{index}({len(ops)} ops)"
        self.label = (f"XLA cluster of {len(ops)} ops ({ops[0].describe()} ... "
                      f"{ops[-1].describe()})")


def plan(ops, kept, fed):
    """({op: Cluster} for every member, the ops in a topological order where each cluster's
    members are adjacent) for a partition's `ops` (topologically ordered); `kept` holds the
    tensors whose values the step needs on their own (fetched, sent, fed); `fed` the fed ones."""
    lowerings = backend()[1]
    static, candidates = _classify(ops, fed, lowerings)
    members = set(ops)
    consumers = {op: [] for op in ops}
    for op in ops:
        for producer in {t.op for t in op.inputs} | set(op.control_inputs):
            if producer in members:
                consumers[producer].append(op)
    depth, received = {}, {}
    for op in ops:
        preds = [t.op for t in op.inputs] + list(op.control_inputs)
        depth[op] = max([depth[p] + (p not in candidates) for p in preds if p in depth],
                        default=0)
        received[op] = frozenset().union(
            *[received[p] for p in preds if p in received],
            [t for t in op.inputs if t.op not in members and t not in fed],
            [c for c in op.control_inputs if c not in members])
    groups = {}
    for op in ops:
        if op in candidates and op not in static and op.type != "VariableV2":
            groups.setdefault((depth[op], received[op]), []).append(op)
    cluster_of = {}
    for group in groups.values():
        if sum(op.type not in ("NoOp", "Identity") for op in group) >= MIN_CLUSTER_OPS:
            key = id(group)
            for op in group:
                cluster_of[op] = key
    # Absorb variables and constant/shape ops read only inside one cluster (reverse order, so
    # a chain of them follows its last consumer in).
    for op in reversed(ops):
        if op in cluster_of or not (op in static or op.type == "VariableV2"):
            continue
        if any(t in kept for t in op.outputs):
            continue
        owners = {cluster_of.get(c) for c in consumers[op]}
        if len(owners) == 1 and None not in owners:
            cluster_of[op] = owners.pop()
    if not cluster_of:
        return {}, list(ops)
    order = _contracted_order(ops, cluster_of)
    if order is None:  # cannot happen by the depth argument; never risk a cyclic plan
        _log.warning("XLA clustering produced a cycle; running this partition on NumPy")
        return {}, list(ops)
    return _build_clusters(order, cluster_of, static, consumers, kept), order


def _classify(ops, fed, lowerings):
    """(ops whose values are known at trace time, ops a cluster can run)."""
    static, candidates = set(), set()
    for op in ops:
        kernel = kernel_registry.get_kernel(op.type)
        if kernel is None or kernel.step_context or kernel.execution != "sync" or \
                op.type in NUMPY_FASTER or any(t in fed for t in op.outputs) or \
                any(t.dtype.name in _NON_ARRAY_DTYPES for t in list(op.inputs) + op.outputs):
            continue
        pure = kernel.resource is None
        if pure and (op.type in ALWAYS_STATIC or
                     (op.inputs and all(t.op in static for t in op.inputs))):
            static.add(op)
            candidates.add(op)
        elif (pure and op.type in lowerings.LOWERINGS) or op.type == "VariableV2" or \
                (kernel.resource == "variable_ref" and op.type in lowerings.REF_LOWERINGS and
                 all(t.op.type == "VariableV2" for t in op.inputs[:kernel.num_refs])):
            candidates.add(op)
    return static, candidates


def _contracted_order(ops, cluster_of):
    """`ops` topologically ordered with each cluster contracted to one unit (placed by its
    last member's creation, as the inline path runs updates after the reads made before
    them), or None on a cycle."""
    unit_of = {op: cluster_of.get(op, op) for op in ops}
    units = {}
    for op in ops:
        units.setdefault(unit_of[op], []).append(op)
    pending = {unit: set() for unit in units}
    consumers = {unit: set() for unit in units}
    for op in ops:
        for producer in [t.op for t in op.inputs] + list(op.control_inputs):
            if producer in unit_of and unit_of[producer] != unit_of[op]:
                pending[unit_of[op]].add(unit_of[producer])
                consumers[unit_of[producer]].add(unit_of[op])
    key = {unit: max(op._id for op in members) for unit, members in units.items()}
    heap = [(key[u], n, u) for n, u in enumerate(units) if not pending[u]]
    heapq.heapify(heap)
    serial = {u: n for n, u in enumerate(units)}
    order = []
    while heap:
        _, _, unit = heapq.heappop(heap)
        order.extend(units[unit])
        for consumer in consumers[unit]:
            pending[consumer].discard(unit)
            if not pending[consumer]:
                heapq.heappush(heap, (key[consumer], serial[consumer], consumer))
    return order if len(order) == len(ops) else None


def _build_clusters(order, cluster_of, static, consumers, kept):
    by_key = {}
    for op in order:
        if op in cluster_of:
            by_key.setdefault(cluster_of[op], []).append(op)
    position = {op: n for n, op in enumerate(order)}
    clusters = {}
    for index, members in enumerate(by_key.values()):
        member_set = set(members)
        traced = set(members)
        stack = [t.op for op in members for t in op.inputs]
        while stack:  # copies of the constant/shape ops the members read
            op = stack.pop()
            if op in static and op not in traced:
                traced.add(op)
                stack.extend(t.op for t in op.inputs)
        trace_ops = sorted(traced, key=position.get)
        inputs, outputs, variables = [], [], []
        for op in trace_ops:
            for tensor in op.inputs:
                if tensor.op.type == "VariableV2":
                    if tensor.op not in variables:
                        variables.append(tensor.op)
                elif tensor.op not in traced and tensor not in inputs:
                    inputs.append(tensor)
        for op in members:
            if op.type == "VariableV2":
                continue
            for tensor in op.outputs:
                readers = [c for c in consumers[op] if c not in member_set and tensor in c.inputs]
                if tensor in kept or readers:
                    outputs.append(tensor)
            kernel = kernel_registry.get_kernel(op.type)
            if kernel.resource == "variable_ref":
                # A fetched variable the cluster updates: on the NumPy path its fetched array
                # is the storage the update wrote in place (`run([train, global_step])` gives
                # the new step), so the cluster writes the new value into the fetch's slot.
                outputs.extend(ref for ref in op.inputs[:kernel.num_refs]
                               if ref in kept and ref not in outputs)
        cluster = Cluster(index, members, trace_ops, inputs, outputs, variables)
        for op in members:
            clusters[op] = cluster
    return clusters


def plan_partition(ops, kept, fed, jit=False):
    """plan(), when `jit` asks for XLA and JAX is installed; else no clusters and `ops` as they
    are. Only a local Session's plans ask (runtime/session.py: its config or TENSORWEAVE_XLA):
    the partitions of distributed workers and of function bodies run on NumPy (two multi-task
    tests deadlocked with worker partitions compiled; not yet understood)."""
    if not jit or backend() is None:
        return {}, ops
    return plan(ops, kept, fed)
