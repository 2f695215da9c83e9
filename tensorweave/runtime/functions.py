"""Running function bodies (framework/function_graph.FuncGraph) for the functional ops.

The If and While kernels (kernels/control_flow.py) cannot see graphs or the runtime; they call
`step.run_function(func, inputs)` on their step context (scheduler.StepContext), which lands
here. A body runs on the device of the op that calls it, inline on the calling thread, with the
caller's step context: its kernels share the step's cancellation token, rendezvous and
resource manager, so a variable mirrored in the body is the caller's variable, and a deadline
or Session.close() stops a loop between two of its body's ops.

A body's plan (pruned to its outputs and its targets, kernels and resources bound) is built on
first use and cached per (function, resource manager, device): a while loop of 1,000
iterations builds nothing after its first. The cache is weak on both keys, so plans go away
with their graph or their session's resources.
"""
import threading
import weakref

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime import executor
from tensorweave.runtime import partition as partition_lib

_plans = weakref.WeakKeyDictionary()  # FuncGraph -> WeakKeyDictionary(manager -> {device: plan})
_lock = threading.Lock()


class FunctionPlan:
    """The runnable body of one function on one device."""

    def __init__(self, func, resource_manager, device):
        self.name = func.name
        feeds = list(func.inputs)
        ops = executor.prune(func.outputs, func.targets, feeds)
        part = partition_lib.Partition(device)
        part.ops = ops
        part.feeds = feeds
        part.fetches = list(func.outputs)
        plan = executor.PartitionPlan(part, resource_manager, func.outputs)
        for node in plan.nodes:
            if node.execution == executor.ASYNC:
                raise errors.UnimplementedError(
                    None, node.op, f"{node.label}: asynchronous ops cannot run inside the "
                    f"body of function {func.name}")
        self.nodes = plan.nodes
        self.num_slots = plan.num_slots
        self.input_slots = [plan.feed_slots[t] for t in feeds]
        self.output_slots = [plan.fetch_slots[t] for t in func.outputs]
        self.copy_outputs = [plan.copy_fetch[t] for t in func.outputs]


def plan_for(func, resource_manager, device):
    with _lock:
        by_manager = _plans.get(func)
        if by_manager is None:
            by_manager = _plans[func] = weakref.WeakKeyDictionary()
        by_device = by_manager.get(resource_manager)
        if by_device is None:
            by_device = by_manager[resource_manager] = {}
        plan = by_device.get(device)
    if plan is None:  # built outside the lock: a body may hold nested functions
        plan = FunctionPlan(func, resource_manager, device)
        with _lock:
            plan = by_device.setdefault(device, plan)
    return plan


def run_function(step, func, inputs):
    """Runs `func` on `inputs` (arrays, one per func.inputs) within `step`; returns its outputs.

    Raises the step's error as soon as the step is cancelled, and an inner op's failure as an
    OpError naming that op."""
    if step.resource_manager is None:
        raise errors.InternalError(None, None, f"function {func.name} needs a step context "
                                   "with a resource manager")
    plan = plan_for(func, step.resource_manager, step.device)
    if len(inputs) != len(plan.input_slots):
        raise errors.InvalidArgumentError(
            None, None, f"function {func.name} takes {len(plan.input_slots)} inputs, got "
            f"{len(inputs)}")
    values = [None] * plan.num_slots
    for slot, value in zip(plan.input_slots, inputs):
        values[slot] = value
    token = step.cancellation
    node = None
    try:
        for node in plan.nodes:
            if token._error is not None:  # noqa: SLF001 - checked per op, as scheduler.py
                raise token._error
            args = [values[i] for i in node.input_slots]
            executor.store_outputs(node, values, node.compute(step, *args, **node.kwargs)
                                   if node.needs_step else node.compute(*args, **node.kwargs))
    except errors.OpError as exc:
        if exc is token.error:
            raise
        raise executor.op_error(node, exc) from None
    except Exception as exc:  # noqa: BLE001 - every kernel failure becomes an OpError
        raise executor.op_error(node, exc) from None
    # An output may alias a variable the next iteration (or a later op) updates in place.
    return [values[slot].copy() if copy and isinstance(values[slot], np.ndarray)
            else values[slot] for slot, copy in zip(plan.output_slots, plan.copy_outputs)]
