"""Execution plans of one partition: prune, order, bind kernels, and run inline.

A plan is built once per (feeds, fetches, targets) and device, then reused: each step only walks
a flat list of nodes (kernel, input slots, output slots), so a training loop pays the Python
planning cost once. Values live in a per-step list indexed by slot. A partition whose nodes all
compute synchronously can run inline on the caller's thread (`run_inline`, the fast path of a
single-device step); otherwise scheduler.py runs it on its device's lanes. The dependency
counts and consumer lists the scheduler needs are computed here, once.
"""
import heapq
import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import registry as kernel_registry
from tensorweave.runtime import fusion, resources, xla
from tensorweave.runtime.xla_runner import ClusterRunner

SYNC, BLOCKING, ASYNC = "sync", "blocking", "async"


class Node:
    __slots__ = ("index", "op", "name", "label", "op_type", "compute", "input_slots",
                 "output_slots", "kwargs", "single", "execution", "needs_step", "consumers",
                 "num_deps", "fused")

    def __init__(self, op, name, label, op_type, compute, input_slots, output_slots, kwargs,
                 execution=SYNC, needs_step=False):
        self.op = op              # the Operation errors name (for Send/Recv: the producer)
        self.name = name          # the name traces show
        self.label = label        # how errors describe the node
        self.op_type = op_type
        self.compute = compute
        self.input_slots = input_slots
        self.output_slots = output_slots
        self.kwargs = kwargs
        self.single = len(output_slots) == 1
        self.execution = execution
        self.needs_step = needs_step
        self.consumers = []
        self.num_deps = 0
        self.fused = None         # the ops a fused node runs (fusion.py), else None


def prune(fetch_tensors, target_ops, feed_tensors):
    """The ops a run must execute, in a topological order (creation order among ready ops)."""
    fed = set(feed_tensors)
    needed = set()
    stack = [t.op for t in fetch_tensors if t not in fed] + list(target_ops)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for tensor in op.inputs:
            if tensor not in fed:
                stack.append(tensor.op)
        stack.extend(op.control_inputs)
    return topological_order(needed, fed)


def topological_order(ops, fed=frozenset()):
    pending = {}
    consumers = {op: [] for op in ops}
    for op in ops:
        deps = {t.op for t in op.inputs if t not in fed and t.op in ops}
        deps.update(c for c in op.control_inputs if c in ops)
        pending[op] = len(deps)
        for dep in deps:
            consumers[dep].append(op)
    order = []
    heap = [(op._id, op) for op, count in pending.items() if count == 0]
    heapq.heapify(heap)
    while heap:
        _, op = heapq.heappop(heap)
        order.append(op)
        for consumer in consumers[op]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                heapq.heappush(heap, (consumer._id, consumer))
    if len(order) != len(ops):
        stuck = sorted(op.name for op, count in pending.items() if count > 0)[:5]
        raise errors.InvalidArgumentError(None, None, f"Graph has a cycle among ops {stuck}")
    return order


class PartitionPlan:
    """The runnable schedule of one partition (runtime/partition.py) for one signature."""

    def __init__(self, part, resource_manager, step_fetches=(), jit=False):
        """`jit`: compile the lowerable ops into XLA clusters (xla.py)."""
        self.device = part.device
        self.resource_manager = resource_manager  # for the function bodies its ops run
        slots = {}
        for tensor in part.feeds:
            slots[tensor] = len(slots)
        for key in part.recvs:
            slots[("recv", key)] = len(slots)
        self.feed_slots = {t: slots[t] for t in part.feeds}
        sent = {t.tensor for t in part.sends if t.tensor is not None}
        value_used = _ops_whose_values_are_used(part.ops, list(part.fetches) + list(sent))
        tensors_used = {t for op in part.ops for t in op.inputs} | set(part.fetches) | sent
        for op in part.ops:
            for tensor in op.outputs:
                if tensor not in slots:  # a fed output keeps its feed slot
                    slots[tensor] = len(slots)
        kept = set(part.fetches) | sent | set(part.feeds)
        clusters, order = xla.plan_partition(part.ops, kept, set(part.feeds), jit)
        fusions = {op: chain for op, chain in fusion.plan(part.ops, kept).items()
                   if not any(member in clusters for member in chain.ops)}
        nodes = []
        node_of = {}  # op, or the tensor / control producer a Recv stands for -> node index
        for key, transfer in part.recvs.items():
            node = bind_comm("_Recv", transfer, [], [slots[("recv", key)]])
            self._add(nodes, node, ())
            node_of[("recv", key)] = node.index
        for op in order:
            cluster = clusters.get(op)
            if cluster is not None:
                if op is cluster.ops[-1]:  # bound once, where its last member is
                    node = bind_cluster(cluster, [slots[t] if t in slots else slots[("recv", t)]
                                                  for t in cluster.inputs],
                                        [slots[t] for t in cluster.outputs], resource_manager)
                    self._add(nodes, node, _deps(node_of, cluster.trace_ops))
                    for member in cluster.ops:
                        node_of[member] = node.index
                continue
            kernel = kernel_registry.get_kernel(op.type)
            # A variable op only runs when something reads its value; ops taking it as a ref
            # (Assign, Apply*) find its storage directly (this lets an initializer run).
            if kernel is not None and kernel.resource == "variable" and op not in value_used:
                continue
            fused = fusions.get(op)
            if fused is not None and op is not fused.ops[-1]:
                continue  # bound with the chain's last op, when all its inputs are ready
            chain = fused.ops if fused is not None else (op,)
            inputs = fused.inputs if fused is not None else op.inputs
            input_slots = [slots[t] if t in slots else slots[("recv", t)] for t in inputs]
            if fused is not None:
                node = bind_fused(fused, input_slots, slots[fused.output], resource_manager)
            else:
                node = bind_op(op, input_slots, [slots[t] for t in op.outputs], resource_manager)
            if op.type == "While" and node.kwargs.get("back_prop") and \
                    op.outputs[-1] not in tensors_used:
                # No WhileGrad of this step reads the loop's history: do not keep every
                # iteration's values (a long loop without a gradient would hold them all).
                node.kwargs = dict(node.kwargs, back_prop=False)
            self._add(nodes, node, _deps(node_of, chain))
            for member in chain:
                node_of[member] = node.index
        for transfer in part.sends:
            if transfer.tensor is None:
                node = bind_comm("_Send", transfer, [], [])
            else:
                node = bind_comm("_Send", transfer, [slots[transfer.tensor]], [],
                                 copy=_may_alias_variable(transfer.tensor, set(part.feeds)),
                                 manager=resource_manager)
            # A skipped variable op (nothing reads its value here) has nothing to wait for.
            producer = node_of.get(transfer.producer)
            self._add(nodes, node, () if producer is None else (producer,))
        _order_updates_after_reads(nodes)
        self.nodes = nodes
        self.num_slots = len(slots)
        self.fetch_slots = {t: slots[t] for t in part.fetches}
        self.initial_ready = [n.index for n in nodes if n.num_deps == 0]
        self.num_deps = [n.num_deps for n in nodes]
        self.inline = all(n.execution == SYNC and not n.needs_step for n in nodes)
        self.copy_fetch = {t: _may_alias_variable(t, set(part.feeds)) for t in step_fetches}
        self.ops = [n.op for n in nodes]

    @staticmethod
    def _add(nodes, node, deps):
        node.index = len(nodes)
        nodes.append(node)
        for dep in deps:
            nodes[dep].consumers.append(node.index)
            node.num_deps += 1

    def run_inline(self, values, step_stats=None):
        """Runs every node in order on this thread (the plan must be `inline`).

        Floating-point errors are quiet, as in TF (a kernel yields inf or nan, not a warning):
        one `np.errstate` per step here and per lane thread in scheduler.py, instead of one
        per kernel call (that cost ~1.5 us, more than a tiny kernel)."""
        node = None
        try:
            with np.errstate(all="ignore"):
                if step_stats is None:
                    for node in self.nodes:
                        result = node.compute(*[values[i] for i in node.input_slots],
                                              **node.kwargs)
                        if node.single:
                            values[node.output_slots[0]] = result
                        else:
                            for slot, value in zip(node.output_slots, result):
                                values[slot] = value
                else:
                    for node in self.nodes:
                        start = time.perf_counter()
                        result = node.compute(*[values[i] for i in node.input_slots],
                                              **node.kwargs)
                        store_outputs(node, values, result)
                        record(step_stats, node, self.device, start, time.perf_counter(), values)
        except Exception as exc:  # noqa: BLE001 - every kernel failure becomes an OpError
            if node is None:
                raise
            raise op_error(node, exc) from None


def _deps(node_of, chain):
    """The nodes the node running the ops of `chain` waits for."""
    deps = set()
    for member in chain:
        for tensor in member.inputs:
            dep = node_of.get(tensor.op, node_of.get(("recv", tensor)))
            if dep is not None and tensor.op not in chain:
                deps.add(dep)
        for control in member.control_inputs:
            dep = node_of.get(control, node_of.get(("recv", control)))
            if dep is not None and control not in chain:
                deps.add(dep)
    return deps


def _order_updates_after_reads(nodes):
    """Makes each in-place update of a variable (a "variable_ref" kernel: Assign*, Apply*) wait
    for the ops of the step that read the variable's value and do not depend on the update, so
    that on parallel lanes an optimizer never rewrites a weight under a gradient op still reading
    it (LeNet on lanes diverged that way: a conv's input gradient computed with half-updated
    filters). The inline path runs in creation order, where the reads come first already."""
    readers = {}   # VariableV2 op -> indices of the nodes reading its value
    updates = []   # (node index, the VariableV2 ops it updates in place)
    aliases = {}   # tensor -> its VariableV2 op or None, shared by every walk of this plan
    for node in nodes:
        if node.fused is None and node.op_type != node.op.type:
            continue  # a _Send/_Recv standing in for its producer
        for op in node.fused or (node.op,):
            kernel = kernel_registry.get_kernel(op.type)
            refs = kernel.num_refs if kernel.resource == "variable_ref" else 0
            if refs:
                updates.append((node.index, {t.op for t in op.inputs[:refs]}))
            for tensor in op.inputs[refs:]:
                variable = _aliased_variable(tensor, aliases)
                if variable is not None:
                    readers.setdefault(variable, []).append(node.index)
    for index, variables in updates:
        after = _descendants(nodes, index)  # an edge from one of these would close a cycle
        for variable in variables:
            for reader in readers.get(variable, ()):
                if reader not in after and index not in nodes[reader].consumers:
                    nodes[reader].consumers.append(index)
                    nodes[index].num_deps += 1


def _aliased_variable(tensor, aliases):
    """The VariableV2 op whose storage `tensor` may be (through input-forwarding ops).
    `aliases` memoizes every tensor a walk passes, so that planning a chain of N forwarding
    ops is linear in N, not quadratic (4,000 Identity nodes took 8.2 s to plan)."""
    path, on_path = [], set()
    found = None
    while True:
        if tensor in aliases:
            found = aliases[tensor]
            break
        if tensor in on_path:  # a cycle of forwarding ops: no variable
            break
        path.append(tensor)
        on_path.add(tensor)
        kernel = kernel_registry.get_kernel(tensor.op.type)
        if kernel is None:
            break
        if tensor.op.type == "VariableV2":
            found = tensor.op
            break
        if not kernel.forwards_input or not tensor.op.inputs:
            break
        tensor = tensor.op.inputs[0]
    for walked in path:
        aliases[walked] = found
    return found


def _descendants(nodes, index):
    """`index` and every node that depends on it."""
    found, stack = {index}, [index]
    while stack:
        for consumer in nodes[stack.pop()].consumers:
            if consumer not in found:
                found.add(consumer)
                stack.append(consumer)
    return found


# Observers of every op run, `observer(op, outputs)` after its kernel (tf.debugging's
# enable_check_numerics and enable_dump_debug_info fill it): ops bound while it is empty, the
# usual case, run their kernels unwrapped. Async kernels are not observed.
OP_OBSERVERS = []


def _observed(compute, op):
    single = len(op.outputs) == 1

    def observed(*args, **kw):
        result = compute(*args, **kw)
        outputs = [result] if single else list(result or ())
        for observer in list(OP_OBSERVERS):
            observer(op, outputs)
        return result
    return observed


def bind_op(op, input_slots, output_slots, manager):
    """A Node running `op`'s kernel, with its resources bound (not its step context)."""
    kernel = kernel_registry.get_kernel(op.type)
    if kernel is None:
        raise errors.UnimplementedError(None, op, f"{op.describe()}: no kernel is registered "
                                        f"for op type {op.type}")
    kwargs = {name: op.get_attr(name) for name in kernel.attr_names}
    inputs = list(op.inputs)
    resource = None
    if kernel.resource == "variable":
        resource = resources.variable_cell(manager, op)
    elif kernel.resource == "variable_ref":
        cells = []
        for index, ref in enumerate(inputs[:kernel.num_refs]):
            if ref.op.type != "VariableV2":
                raise errors.InvalidArgumentError(
                    None, op, f"{op.describe()}: input {index} must be a variable "
                    f"(VariableV2), got {ref.op.type} {ref.op.name}")
            cells.append(resources.variable_cell(manager, ref.op))
        resource = cells[0] if len(cells) == 1 else tuple(cells)
        input_slots = input_slots[kernel.num_refs:]
    elif kernel.resource == "rng":
        resource = resources.rng_for(manager, op)
    elif kernel.resource == "resource":
        resource = resources.owned_resource(manager, op, kernel.resource_factory)
    elif kernel.resource == "resource_ref":
        owned = []
        for index, handle in enumerate(inputs[:kernel.num_refs]):
            owner = handle.op
            owner_kernel = kernel_registry.get_kernel(owner.type)
            if owner_kernel is None or owner_kernel.resource != "resource":
                raise errors.InvalidArgumentError(
                    None, op, f"{op.describe()}: input {index} must be a resource handle, got "
                    f"{owner.type} {owner.name}")
            owned.append(resources.owned_resource(manager, owner, owner_kernel.resource_factory))
        resource = owned[0] if len(owned) == 1 else tuple(owned)
        input_slots = input_slots[kernel.num_refs:]
    compute = kernel.compute
    if resource is not None:
        bound = resource if isinstance(resource, tuple) else (resource,)
        raw = compute
        if kernel.step_context:
            def compute(step, *args, **kw):
                return raw(step, *bound, *args, **kw)
        else:
            def compute(*args, **kw):
                return raw(*bound, *args, **kw)
    value_inputs = inputs[len(inputs) - len(input_slots):]
    compute = _reading_refs_when_run(compute, value_inputs, manager, kernel.step_context)
    if OP_OBSERVERS and kernel.execution != ASYNC:
        compute = _observed(compute, op)
    return Node(op, op.name, op.describe(), op.type, compute, list(input_slots), list(output_slots),
                kwargs, kernel.execution, kernel.step_context)


def bind_fused(fused, input_slots, output_slot, manager):
    """A Node running a fused chain's kernel (fusion.py); errors name the chain's first op."""
    kernel = kernel_registry.get_plan_kernel(fused.op_type)
    compute = _reading_refs_when_run(kernel.compute, fused.inputs, manager, False)
    label = f"{fused.ops[0].describe()} (fused with {', '.join(op.name for op in fused.ops[1:])})"
    node = Node(fused.ops[0], fused.name, label, fused.op_type, compute, list(input_slots),
                [output_slot], dict(fused.attrs))
    node.fused = fused.ops
    return node


def bind_cluster(cluster, input_slots, output_slots, manager):
    """A Node running an XLA cluster (xla.py) as one compiled function."""
    node = Node(cluster.ops[0], cluster.name, cluster.label, xla.CLUSTER_TYPE,
                ClusterRunner(cluster, manager), list(input_slots), list(output_slots), {})
    node.fused = cluster.ops
    return node


def _reading_refs_when_run(compute, value_inputs, manager, step_context):
    """`compute` reading each input that is a variable's ref (a VariableV2 output) from the
    variable's storage when it runs, as TF's ref edges do: an Assign ordered before the read by
    a control dependency is seen even if the variable was uninitialized when its VariableV2 op
    ran, and a read of an uninitialized variable fails in the op that reads it."""
    refs = [(position + (1 if step_context else 0), resources.variable_cell(manager, t.op))
            for position, t in enumerate(value_inputs) if t.op.type == "VariableV2"]
    if not refs:
        return compute
    raw = compute

    def compute(*args, **kw):
        args = list(args)
        for position, cell in refs:
            args[position] = cell.read()
        return raw(*args, **kw)
    return compute


def bind_comm(op_type, transfer, input_slots, output_slots, copy=False, manager=None):
    """A _Send or _Recv node for one side of a partition.Transfer."""
    kernel = kernel_registry.get_kernel(op_type)
    kwargs = {"tensor_name": transfer.tensor_name, "send_device": transfer.src,
              "send_device_incarnation": 0, "recv_device": transfer.dst,
              "client_terminated": False}
    kwargs["T" if op_type == "_Send" else "tensor_type"] = transfer.dtype
    compute = kernel.compute
    if op_type == "_Send" and transfer.tensor is None:
        raw = compute

        def compute(step, **kw):  # a control edge carries an empty value
            return raw(step, np.zeros((), np.bool_), **kw)
    elif copy:  # the sender may update the variable in place before the receiver reads it
        raw = compute

        def compute(step, value, **kw):
            return raw(step, np.array(value, copy=True), **kw)
    if op_type == "_Send" and transfer.tensor is not None:  # read a ref before copying it
        compute = _reading_refs_when_run(compute, [transfer.tensor], manager, True)
    label = (f"{op_type} of {transfer.tensor_name} from {transfer.src} to {transfer.dst} "
             f"(for {transfer.producer.describe()})")
    name = f"{op_type}/{transfer.tensor_name}->{transfer.dst}"
    return Node(transfer.producer, name, label, op_type, compute, input_slots, output_slots, kwargs,
                kernel.execution, kernel.step_context)


def store_outputs(node, values, result):
    if node.single:
        values[node.output_slots[0]] = result
    elif node.output_slots:
        for slot, value in zip(node.output_slots, result):
            values[slot] = value


def record(step_stats, node, device, start, end, values, label=""):
    """`label`: what the kernel says about this run (a collective: which data plane)."""
    entry = {"op": node.name, "type": node.op_type, "device": device, "start_s": start,
             "duration_s": end - start,
             "output_bytes": sum(getattr(values[s], "nbytes", 0) for s in node.output_slots)}
    if label:
        entry["label"] = label
    step_stats.append(entry)


def op_error(node, exc):
    """`exc`, raised by `node`'s kernel, as an OpError naming the op and where it was made."""
    if isinstance(exc, errors.OpError):
        if exc.op is not None:
            return exc
        return type(exc)(None, node.op, f"{node.label}: {exc.message}")
    # A file a kernel could not open is TF's NotFound / PermissionDenied, not a bad argument.
    kind = errors.InvalidArgumentError
    if isinstance(exc, FileNotFoundError):
        kind = errors.NotFoundError
    elif isinstance(exc, PermissionError):
        kind = errors.PermissionDeniedError
    error = kind(None, node.op, f"{node.label}: {type(exc).__name__}: {exc}")
    error.kernel_exception = exc  # the original, for debugging a kernel
    return error


def check_initialized_fetch(tensor, value):
    """A fetched VariableV2 output is the variable's storage: None means uninitialized."""
    if value is None and tensor.op.type == "VariableV2":
        raise errors.FailedPreconditionError(
            None, tensor.op, f"Attempting to use uninitialized value {tensor.op.name}: run its "
            "initializer first (e.g. sess.run(tf.global_variables_initializer())).")


def fetched(value, copy):
    """What a fetch returns: NumPy scalars for 0-d values (as TF does), and a copy when the
    value may alias a variable that later steps update in place."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value[()]
        if copy or not value.flags.writeable:  # a constant's array is shared, read-only
            return value.copy()
    return value


def _ops_whose_values_are_used(ops, fetch_tensors):
    used = {t.op for t in fetch_tensors}
    for op in ops:
        kernel = kernel_registry.get_kernel(op.type)
        refs = kernel.num_refs if kernel is not None and kernel.resource == "variable_ref" else 0
        used.update(t.op for t in op.inputs[refs:])
    return used


def _may_alias_variable(tensor, fed):
    """True if the value may share memory with a variable's storage."""
    seen = set()
    while tensor not in fed and tensor not in seen:
        seen.add(tensor)
        op = tensor.op
        kernel = kernel_registry.get_kernel(op.type)
        if kernel is None:
            return False
        if kernel.resource in ("variable", "variable_ref"):
            return True
        if not kernel.forwards_input or not op.inputs:
            return False
        tensor = op.inputs[0]
    return False
