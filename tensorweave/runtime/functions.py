"""Running function bodies (framework/function_graph.FuncGraph) for the functional ops.

The If and While kernels (kernels/control_flow.py) cannot see graphs or the runtime; they call
`step.run_function(func, inputs)` on their step context (scheduler.StepContext), which lands
here. A body runs on the device of the op that calls it, inline on the calling thread, with the
caller's step context: its kernels share the step's cancellation token, rendezvous and
resource manager, so a variable mirrored in the body is the caller's variable, and a deadline
or Session.close() stops a loop between two of its body's ops.

A body's plan (pruned to its outputs and its targets, kernels and resources bound) is built on
first use and cached per (function, resource manager, device): a while loop of 1,000
iterations builds nothing after its first. The cache lives on the function and is weak on the
manager, so plans go away with their graph or their session's resources.
"""
import threading
import weakref

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime import executor
from tensorweave.runtime import partition as partition_lib

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
            if node.execution == executor.ASYNC and not node.op_type.startswith("Collective"):
                raise errors.UnimplementedError(
                    None, node.op, f"{node.label}: asynchronous ops cannot run inside the "
                    f"body of function {func.name}")
        self.num_slots = plan.num_slots
        self.input_slots = [plan.feed_slots[t] for t in feeds]
        self.output_slots = [plan.fetch_slots[t] for t in func.outputs]
        self.copy_outputs = [plan.copy_fetch[t] for t in func.outputs]
        # The result ops are Identities: read their inputs' slots instead of running them
        # (a loop body of two tiny ops would otherwise run four nodes an iteration).
        results = {}
        for node in plan.nodes:
            if node.op_type == "Identity" and node.op in func.outputs_ops:
                results[node.output_slots[0]] = node.input_slots[0]
        self.output_slots = [results.get(slot, slot) for slot in self.output_slots]
        self.nodes = [node for node in plan.nodes
                      if not (node.op_type == "Identity" and node.op in func.outputs_ops)]
        # Constants are computed once, here: each run starts from a copy of this template.
        self.template = [None] * plan.num_slots
        for node in [n for n in self.nodes if n.op_type == "Const"]:
            self.template[node.output_slots[0]] = node.compute(**node.kwargs)
            self.nodes.remove(node)
        self.steps = [(_waiting(node.compute) if node.execution == executor.ASYNC else
                       node.compute, node.input_slots, node.output_slots, node.single,
                       node.kwargs, node.needs_step) for node in self.nodes]


def _waiting(compute):
    """An asynchronous kernel run inline: start it and wait for its completion.

    Only collectives are let in (FunctionPlan): they complete through the job's communicator,
    never through other ops of this step, so the wait cannot deadlock the step's threads; the
    peers' timeout and the step's cancellation (a deadline, Session.close) both end it."""
    def run(step, *args, **kwargs):
        finished = threading.Event()
        outcome = {}

        def done(result, error=None, label=None):  # label: the step stats' note (unused here)
            outcome["result"], outcome["error"] = result, error
            finished.set()

        compute(step, *args, done=done, **kwargs)
        finished.wait()
        if outcome["error"] is not None:
            raise outcome["error"]
        return outcome["result"]
    return run


def plan_for(func, resource_manager, device):
    # The cache hangs off the function itself: a global table keyed by functions would keep
    # every function alive (its plans point back at its ops, hence at it).
    with _lock:
        by_manager = getattr(func, "_runtime_plans", None)
        if by_manager is None:
            by_manager = func._runtime_plans = weakref.WeakKeyDictionary()
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
    return bind(step, func)(inputs)


def bind(step, func):
    """`run(inputs) -> outputs` for `func` within `step`, its plan looked up once (a loop
    kernel binds its bodies before iterating)."""
    if step.resource_manager is None:
        raise errors.InternalError(None, None, f"function {func.name} needs a step context "
                                   "with a resource manager")
    plan = plan_for(func, step.resource_manager, step.device)
    token = step.cancellation
    input_slots, output_slots, template = plan.input_slots, plan.output_slots, plan.template
    copies = any(plan.copy_outputs)

    def run(inputs):
        if len(inputs) != len(input_slots):
            raise errors.InvalidArgumentError(
                None, None, f"function {func.name} takes {len(input_slots)} inputs, got "
                f"{len(inputs)}")
        values = template.copy()
        for slot, value in zip(input_slots, inputs):
            values[slot] = value
        index = -1
        try:
            for index, (compute, arg_slots, out_slots, single, kwargs, needs_step) in \
                    enumerate(plan.steps):
                if token._error is not None:  # noqa: SLF001 - checked per op, as scheduler.py
                    raise token._error
                args = [values[i] for i in arg_slots]
                result = compute(step, *args, **kwargs) if needs_step else \
                    compute(*args, **kwargs)
                if single:
                    values[out_slots[0]] = result
                else:
                    for slot, value in zip(out_slots, result):
                        values[slot] = value
        except errors.OpError as exc:
            if exc is token.error or index < 0:
                raise
            raise executor.op_error(plan.nodes[index], exc) from None
        except Exception as exc:  # noqa: BLE001 - every kernel failure becomes an OpError
            if index < 0:
                raise
            raise executor.op_error(plan.nodes[index], exc) from None
        outputs = [values[slot] for slot in output_slots]
        if copies:  # an output may alias a variable a later op updates in place
            outputs = [value.copy() if copy and isinstance(value, np.ndarray) else value
                       for value, copy in zip(outputs, plan.copy_outputs)]
        return outputs

    return run
