"""Execution plans: prune a graph to what a run needs, order it, bind kernels, run it.

A plan is built once per (feeds, fetches, targets) and then reused: each step only walks a flat
list of (kernel, input slots, output slots) entries, so a training loop pays the Python planning
cost once. Values live in a per-step list indexed by slot.
"""
import heapq
import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import registry as kernel_registry
from tensorweave.runtime import resources


class _Step:
    __slots__ = ("op", "compute", "resource", "input_slots", "output_slots", "kwargs", "single")

    def __init__(self, op, compute, resource, input_slots, output_slots, kwargs):
        self.op = op
        self.compute = compute
        self.resource = resource
        self.input_slots = input_slots
        self.output_slots = output_slots
        self.kwargs = kwargs
        self.single = len(output_slots) == 1


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
    ready = sorted((op for op, count in pending.items() if count == 0), key=lambda o: o._id)
    order = []
    heap = [(op._id, op) for op in ready]
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


class ExecutionPlan:
    """A cached, runnable schedule for one (feeds, fetches, targets) signature."""

    def __init__(self, fetch_tensors, target_ops, feed_tensors, resource_manager):
        self.feed_tensors = list(feed_tensors)
        ops = prune(fetch_tensors, target_ops, self.feed_tensors)
        slots = {}
        for tensor in self.feed_tensors:
            slots[tensor] = len(slots)
        for op in ops:
            for tensor in op.outputs:
                if tensor not in slots:
                    slots[tensor] = len(slots)
        self.num_slots = len(slots)
        self.feed_slots = {t: slots[t] for t in self.feed_tensors}
        self.fetch_slots = [slots[t] for t in fetch_tensors]
        value_used = _ops_whose_values_are_used(ops, fetch_tensors)
        # A variable op only needs to run when something reads its value; ops that take it as a
        # ref (Assign, Apply*) find its storage directly (this is what lets an initializer run).
        self.steps = [self._bind(op, slots, resource_manager) for op in ops
                      if op in value_used or kernel_registry.get_kernel(op.type) is None or
                      kernel_registry.get_kernel(op.type).resource != "variable"]
        self.ops = ops
        self.copy_fetch = [_may_alias_variable(t, set(self.feed_tensors)) for t in fetch_tensors]

    @staticmethod
    def _bind(op, slots, manager):
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
            inputs = inputs[kernel.num_refs:]
        elif kernel.resource == "rng":
            resource = resources.rng_for(manager, op)
        elif kernel.resource == "resource":
            resource = resources.owned_resource(manager, op, kernel.resource_factory)
        elif kernel.resource == "resource_ref":
            owner = inputs[0].op
            owner_kernel = kernel_registry.get_kernel(owner.type)
            if owner_kernel is None or owner_kernel.resource != "resource":
                raise errors.InvalidArgumentError(
                    None, op, f"{op.describe()}: input 0 must be a resource handle, got "
                    f"{owner.type} {owner.name}")
            resource = resources.owned_resource(manager, owner, owner_kernel.resource_factory)
            inputs = inputs[1:]
        compute = kernel.compute
        if resource is not None:
            bound = resource if isinstance(resource, tuple) else (resource,)
            raw = compute

            def compute(*args, **kw):
                return raw(*bound, *args, **kw)
        return _Step(op, compute, resource, [slots[t] for t in inputs],
                     [slots[t] for t in op.outputs], kwargs)

    def run(self, feed_values, step_stats=None):
        """Runs one step; `feed_values` maps fed tensors to arrays. Returns the fetched values."""
        values = [None] * self.num_slots
        for tensor, value in feed_values.items():
            values[self.feed_slots[tensor]] = value
        step = None
        try:
            if step_stats is None:
                for step in self.steps:
                    slots = step.input_slots
                    result = step.compute(*[values[i] for i in slots], **step.kwargs)
                    if step.single:
                        values[step.output_slots[0]] = result
                    else:
                        for slot, value in zip(step.output_slots, result):
                            values[slot] = value
            else:
                self._run_traced(values, step_stats)
        except errors.OpError as exc:
            if exc.op is not None or step is None:
                raise
            raise type(exc)(None, step.op, f"{step.op.describe()}: {exc.message}") from None
        except Exception as exc:  # a kernel failed: name the op and where the user made it
            if step is None:
                raise
            error = errors.InvalidArgumentError(
                None, step.op, f"{step.op.describe()}: {type(exc).__name__}: {exc}")
            error.kernel_exception = exc  # the original, for debugging a kernel
            raise error from None
        return [_fetched(values[i], copy) for i, copy in zip(self.fetch_slots, self.copy_fetch)]

    def _run_traced(self, values, step_stats):
        for step in self.steps:
            start = time.perf_counter()
            result = step.compute(*[values[i] for i in step.input_slots], **step.kwargs)
            end = time.perf_counter()
            outputs = (result,) if step.single else tuple(result)
            for slot, value in zip(step.output_slots, outputs):
                values[slot] = value
            step_stats.append({"op": step.op.name, "type": step.op.type,
                               "device": step.op.device, "start_s": start,
                               "duration_s": end - start,
                               "output_bytes": sum(getattr(v, "nbytes", 0) for v in outputs)})


def _fetched(value, copy):
    """What a fetch returns: NumPy scalars for 0-d values (as TF does), and a copy when the
    value may alias a variable that later steps update in place."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value[()]
        if copy:
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
    """True if the fetched value may share memory with a variable's storage."""
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
