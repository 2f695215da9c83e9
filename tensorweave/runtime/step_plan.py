"""A step's plan: prune, place, partition, compile one plan per device; then run it.

`GraphPlacement` keeps a session's placement of its graph: the whole graph is placed at the
first step (as TF's DirectSession does, unless GraphOptions.place_pruned_graph), and when the
graph grows only the new ops are placed, the others keep their devices, so a variable never
moves. `StepPlan.run` takes the fast path when the step is one partition of synchronous
kernels, has no deadline and is not estimated to compute for long: it runs inline on the
calling thread with no thread hop. Any other step (several devices, a Recv, a blocking queue op,
a deadline, a long step whose branches can overlap) runs on the parallel executor.
"""
import itertools
import threading

from tensorweave.runtime import cost_model
from tensorweave.runtime import executor
from tensorweave.runtime import partition as partition_lib
from tensorweave.runtime import placer as placer_lib
from tensorweave.runtime import scheduler
from tensorweave.runtime.cancellation import CancellationToken

_step_ids = itertools.count(1)


def next_step_id():
    return next(_step_ids)


class GraphPlacement:
    """The device of every op of one graph, for one session's devices and options."""

    def __init__(self, graph, device_set, allow_soft_placement=False, log=False,
                 place_pruned_graph=False):
        self.graph = graph
        self.device_set = device_set
        self.allow_soft_placement = allow_soft_placement
        self.log = log
        self.place_pruned_graph = place_pruned_graph
        self.assignment = {}
        self.last = None
        self._placed_version = None
        self._lock = threading.Lock()

    def report(self):
        """The placement table of every op placed so far."""
        with self._lock:
            return placer_lib.placement_table(self._whole(), list(self.assignment),
                                              self.device_set.names)

    def _whole(self):
        """Every op placed so far, with the estimate of the last placement."""
        return placer_lib.Placement(self.assignment, self.last.estimate if self.last else None)

    def assign(self, ops):
        """The devices of `ops` (placing the graph's new ops first); op -> device name."""
        with self._lock:
            if self.place_pruned_graph:
                missing = [op for op in ops if op not in self.assignment]
                if missing:
                    self._place(sorted(set(self.assignment) | set(missing),
                                       key=lambda o: o._id))
            elif self._placed_version != self.graph.version:
                self._place(self.graph.get_operations())
                self._placed_version = self.graph.version
            return self.assignment

    def _place(self, ops):
        if len(self.device_set) == 1:  # nothing to choose: only check the new ops' requests
            ops = [op for op in ops if op not in self.assignment]
            if not ops:
                return
        placement = placer_lib.place(ops, self.device_set, self.allow_soft_placement,
                                     pinned=self.assignment)
        self.assignment.update(placement.assignment)
        self.last = placement
        if self.log:
            placer_lib.log_placement(self._whole(), list(self.assignment), self.device_set.names)


# A one-device step estimated (cost_model.py) to compute this long runs on the device's lanes,
# whose independent branches then overlap, instead of inline: the lanes' hand-offs (~1 us a
# node) are lost in it. LeNet (estimated 58 ms, ~100 nodes) ran 1.8x faster on the lanes
# than inline at load 8-12 (BENCHMARKS.md, LeNet); the MLP (8 ms) and softmax benchmarks stay
# inline, as issue 4 measured the MLP slower on lanes.
LANES_MIN_ESTIMATED_SECONDS = 0.02


def _worth_lanes(ops, device_set, plan):
    device = device_set.by_name.get(plan.device)
    if device is None or device.lanes < 2:
        return False
    return sum(cost_model.compute_seconds(op) for op in ops) >= LANES_MIN_ESTIMATED_SECONDS


class StepPlan:
    """The cached plans of one (feeds, fetches, targets) signature, one per device."""

    def __init__(self, fetch_tensors, target_ops, feed_tensors, placement, resource_manager,
                 jit=False):
        """`jit`: compile lowerable ops with XLA (runtime/xla.py)."""
        feed_tensors = list(feed_tensors)
        ops = executor.prune(fetch_tensors, target_ops, feed_tensors)
        assignment = placement.assign(ops)
        self.partitions = partition_lib.partition(ops, assignment, feed_tensors, fetch_tensors)
        self.plans = [executor.PartitionPlan(part, resource_manager, fetch_tensors, jit)
                      for part in self.partitions.values()]
        self.inline = len(self.plans) <= 1 and all(plan.inline for plan in self.plans)
        if self.inline and self.plans and _worth_lanes(ops, placement.device_set, self.plans[0]):
            self.inline = False
        self.devices = [plan.device for plan in self.plans]
        fed = set(feed_tensors)
        self._fetches = []  # (plan index or None for a fed tensor, slot or tensor, copy)
        self._variable_fetches = []  # (position, VariableV2 output): None if uninitialized
        for tensor in fetch_tensors:
            if tensor in fed:
                self._fetches.append((None, tensor, False))
                continue
            for index, plan in enumerate(self.plans):
                if tensor in plan.fetch_slots:
                    self._fetches.append((index, plan.fetch_slots[tensor],
                                          plan.copy_fetch[tensor]))
                    if tensor.op.type == "VariableV2":
                        self._variable_fetches.append((len(self._fetches) - 1, tensor))
                    break

    def run(self, feed_values, runtime_factory=None, timeout=None, step_stats=None,
            register_step=None):
        """Runs one step; returns the fetched values in order.

        `runtime_factory()` gives the session's threads (needed unless the step runs inline);
        `register_step(token)` lets the session cancel the step and returns an unregister
        callable; `timeout` is in seconds.
        """
        if self.inline and timeout is None:
            values_by_plan = []
            if self.plans:
                plan = self.plans[0]
                values = [None] * plan.num_slots
                for tensor, slot in plan.feed_slots.items():
                    values[slot] = feed_values[tensor]
                plan.run_inline(values, step_stats)
                values_by_plan.append(values)
            return self._collect(values_by_plan, feed_values)
        token = CancellationToken()
        unregister = register_step(token) if register_step is not None else None
        step = scheduler.ParallelStep(self.plans, runtime_factory(), token, next_step_id(),
                                      step_stats)
        try:
            step.start(feed_values)
            step.wait(timeout)
            return self._collect([run.values for run in step.runs], feed_values)
        finally:
            step.release()
            if unregister is not None:
                unregister()

    def _collect(self, values_by_plan, feed_values):
        out = []
        for index, where, copy in self._fetches:
            if index is None:
                out.append(executor.fetched(feed_values[where], False))
            else:
                out.append(executor.fetched(values_by_plan[index][where], copy))
        for position, tensor in self._variable_fetches:
            executor.check_initialized_fetch(tensor, out[position])
        return out

    def partition_graph_defs(self, client_device):
        return [partition_lib.partition_graph_def(part, client_device)
                for part in self.partitions.values()]
