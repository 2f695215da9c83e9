"""The parallel executor: runs the partitions of one step concurrently, each on its device.

Threads. Every device has `lanes` persistent worker threads (devices.py) that take ready nodes
from the device's queue; a worker that finishes a node runs one of the nodes it made ready
itself (no queue hop down a chain) and queues the others, which the device's other lanes pick
up, so independent branches overlap. Blocking kernels (a dequeue, take_grad) run on a separate
pool that grows on demand, so waiting never holds a device lane; asynchronous kernels (Recv)
hold no thread at all: the rendezvous calls them back. NumPy releases the GIL inside BLAS and
most large loops, so lanes really compute at the same time.

Cancellation. Every step has a token (cancellation.py). A failing node, a deadline or
`Session.close()` cancels it once with the error to raise; the token aborts the step's
rendezvous (waiting Recvs complete with the error) and wakes blocking kernels; queued nodes of
a cancelled step are dropped unrun. The caller waits until no node of the step is queued,
running or waiting, so when `run` returns or raises, no thread of the step is left behind.
"""
import queue
import threading
import time
import weakref

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime import cancellation as cancellation_lib
from tensorweave.runtime import executor
from tensorweave.runtime import functions
from tensorweave.runtime import rendezvous as rendezvous_lib

BLOCKING, ASYNC, SYNC = executor.BLOCKING, executor.ASYNC, executor.SYNC


class StepContext:
    """What step-context kernels see (kernels/registry.py documents the interface)."""

    __slots__ = ("step_id", "device", "rendezvous", "cancellation", "resource_manager")

    def __init__(self, step_id, device, rendezvous, cancellation, resource_manager=None):
        self.step_id = step_id
        self.device = device
        self.rendezvous = rendezvous
        self.cancellation = cancellation
        self.resource_manager = resource_manager

    def make_key(self, src_device, dst_device, tensor_name):
        return rendezvous_lib.make_key(src_device, dst_device, tensor_name, self.step_id)

    def run_function(self, func, inputs):
        """Runs a function body (If / While kernels) on this device, within this step."""
        return functions.run_function(self, func, inputs)

    def function(self, func):
        """`run(inputs) -> outputs` for a body a kernel calls many times (While)."""
        return functions.bind(self, func)

    def outliving(self):
        """A context on this step's device and resource manager that outlives the step, for
        a resource that runs function bodies between steps, on threads of its own (an
        iterator's map functions, its prefetch): those bodies must find the resources this
        step's session made (tables, variables) when no step is running."""
        return OutlivingContext(self.device, self.resource_manager)


class OutlivingContext(StepContext):
    """A step context kept by a resource of a resource manager (an iterator) to run function
    bodies later: its own cancellation token, no rendezvous (a body never sends), and the
    manager held weakly, since the manager owns the resource that holds this context (held
    strongly, an iterator would keep its closed session's resources alive)."""

    __slots__ = ("_manager",)

    def __init__(self, device, resource_manager):  # noqa: D107 - the slots, bar the manager
        self.step_id, self.device, self.rendezvous = None, device, None
        self.cancellation = cancellation_lib.CancellationToken()
        self._manager = weakref.ref(resource_manager)

    @property
    def resource_manager(self):
        manager = self._manager()
        if manager is None:
            raise errors.CancelledError(None, None, "The session (resource manager) that "
                                        "owned this resource was closed.")
        return manager


class DeviceLanes:
    """The worker threads of one device, started on first use."""

    def __init__(self, device_name, lanes):
        self.device_name = device_name
        self.lanes = lanes
        self.queue = queue.SimpleQueue()
        self._threads = []
        self._lock = threading.Lock()

    def submit(self, run, node):
        if not self._threads:
            self._start()
        self.queue.put((run, node))

    def _start(self):
        with self._lock:
            if self._threads:
                return
            for lane in range(self.lanes):
                thread = threading.Thread(target=_lane_loop, args=(self.queue,), daemon=True,
                                          name=f"tensorweave lane {lane} of {self.device_name}")
                thread.start()
                self._threads.append(thread)

    def stop(self, timeout=1.0, join=True):
        with self._lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self.queue.put(None)
        for thread in threads if join else ():
            thread.join(timeout)


def _lane_loop(work):
    np.seterr(all="ignore")  # this thread's kernels: quiet floating-point errors, as inline
    while True:
        item = work.get()
        if item is None:
            return
        run, node = item
        while node is not None:
            node = run.execute(node, True)
        item = run = None  # hold nothing of a finished step while waiting for the next


class BlockingPool:
    """Threads for blocking kernels: one per waiting kernel, reused once it returns."""

    def __init__(self):
        self._queue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = []

    def submit(self, run, node):
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                thread = threading.Thread(target=self._loop, daemon=True,
                                          name="tensorweave blocking op")
                self._threads.append(thread)
                thread.start()
        self._queue.put((run, node))

    def _loop(self):
        np.seterr(all="ignore")
        while True:
            item = self._queue.get()
            if item is None:
                return
            run, node = item
            try:
                run.execute(node, False)
            finally:
                item = run = node = None
                with self._lock:
                    self._idle += 1

    def stop(self, timeout=1.0, join=True):
        with self._lock:
            threads, self._threads = self._threads, []
            self._idle = 0
        for _ in threads:
            self._queue.put(None)
        for thread in threads if join else ():
            thread.join(timeout)


class Runtime:
    """A session's threads: the lanes of each device and the blocking pool."""

    def __init__(self, devices):
        self.lanes = {device.name: DeviceLanes(device.name, device.lanes) for device in devices}
        self.blocking = BlockingPool()

    def close(self, join=True):
        for lanes in self.lanes.values():
            lanes.stop(1.0 if join else None, join)
        self.blocking.stop(1.0 if join else None, join)


class ParallelStep:
    """One run of a step's partition plans on a Runtime."""

    def __init__(self, plans, runtime, token, step_id, step_stats=None, rendezvous=None):
        """`rendezvous`: where the step's Sends and Recvs meet; by default a LocalRendezvous
        of its own (a worker passes one that also reaches remote tasks)."""
        self.token = token
        self.rendezvous = rendezvous or rendezvous_lib.LocalRendezvous(step_id)
        self.lock = threading.Lock()
        self.outstanding = 0
        self.done = threading.Event()
        self.step_stats = step_stats
        self.runs = [_PartitionRun(self, plan, runtime, StepContext(
            step_id, plan.device, self.rendezvous, token, plan.resource_manager))
            for plan in plans]
        self._abort_id = token.add_callback(self.rendezvous.abort)

    def start(self, feed_values):
        for run in self.runs:
            for tensor, slot in run.plan.feed_slots.items():
                run.values[slot] = feed_values[tensor]
        with self.lock:
            self.outstanding = sum(len(run.plan.initial_ready) for run in self.runs)
        if self.outstanding == 0:
            self.done.set()
        for run in self.runs:
            run.dispatch(run.plan.initial_ready, False)

    def wait(self, timeout=None):
        """Waits for the step; raises its error (DeadlineExceededError after `timeout` s)."""
        if not self.done.wait(timeout):
            self.token.cancel(errors.DeadlineExceededError(
                None, None, f"The step did not finish within its deadline of {timeout * 1e3:.0f} "
                "ms (RunOptions.timeout_in_ms / ConfigProto.operation_timeout_in_ms); it was "
                "cancelled."))
            self.done.wait()
        self.token.remove_callback(self._abort_id)
        if self.token.error is not None:
            raise self.token.error

    def release(self):
        """Drops the step's values and breaks the step <-> partition-run cycle, so a step's
        buffers are freed when it ends rather than at the next cyclic garbage collection (which
        made later steps page-fault fresh memory in streaks: ~2,000 faults per device per step
        for two 4-matmul chains, 88 ms steps instead of 52)."""
        for run in self.runs:
            run.values = None
            run.step = None
        self.runs = []

    def finish(self, run, node):
        """Counts `node` done; returns its consumers that became ready.

        A consumer fed by this node alone is ready without taking the step's lock, and a node
        that readies exactly one consumer leaves the outstanding count as it is: a chain of
        ops runs without locking at all.
        """
        ready = []
        shared = None
        num_deps = run.plan.num_deps
        for consumer in node.consumers:
            if num_deps[consumer] == 1:
                ready.append(consumer)
            elif shared is None:
                shared = [consumer]
            else:
                shared.append(consumer)
        if shared is None and len(ready) == 1 and self.token._error is None:
            return ready
        with self.lock:
            if self.token._error is not None:
                ready = []
            elif shared is not None:
                pending = run.pending
                for consumer in shared:
                    pending[consumer] -= 1
                    if pending[consumer] == 0:
                        ready.append(consumer)
            self.outstanding += len(ready) - 1
            if self.outstanding == 0:
                self.done.set()
        return ready

    def drop(self):
        """Counts a node that will not run (its step was cancelled, or it failed)."""
        with self.lock:
            self.outstanding -= 1
            if self.outstanding == 0:
                self.done.set()

    def fail(self, node, exc):
        if exc is not self.token.error:
            self.token.cancel(executor.op_error(node, exc))
        self.drop()


class _PartitionRun:
    __slots__ = ("step", "plan", "nodes", "values", "pending", "lanes", "blocking", "context")

    def __init__(self, step, plan, runtime, context):
        self.step = step
        self.plan = plan
        self.nodes = plan.nodes
        self.values = [None] * plan.num_slots
        self.pending = list(plan.num_deps)
        self.lanes = runtime.lanes[plan.device]
        self.blocking = runtime.blocking
        self.context = context

    def dispatch(self, ready, inline):
        """Starts the `ready` nodes; returns one sync node for the calling lane to run next."""
        keep = None
        for index in ready:
            node = self.nodes[index]
            if node.execution == SYNC:
                if inline and keep is None:
                    keep = node
                else:
                    self.lanes.submit(self, node)
            elif node.execution == ASYNC:
                self._start_async(node)
            else:
                self.blocking.submit(self, node)
        return keep

    def execute(self, node, inline):
        """Runs `node`; returns the next node for this lane to run (with `inline`), or None."""
        step = self.step
        if step.token._error is not None:
            step.drop()
            return None
        values = self.values
        try:
            if step.step_stats is not None:
                self._run_traced(node)
            else:
                args = [values[i] for i in node.input_slots]
                if node.needs_step:
                    result = node.compute(self.context, *args, **node.kwargs)
                else:
                    result = node.compute(*args, **node.kwargs)
                if node.single:
                    values[node.output_slots[0]] = result
                elif node.output_slots:
                    for slot, value in zip(node.output_slots, result):
                        values[slot] = value
        except BaseException as exc:  # noqa: BLE001 - any failure stops the whole step
            step.fail(node, exc)
            return None
        ready = step.finish(self, node)
        if inline and len(ready) == 1:
            successor = self.nodes[ready[0]]
            if successor.execution == SYNC:
                return successor
        return self.dispatch(ready, inline)

    def _run_traced(self, node):
        start = time.perf_counter()
        args = [self.values[i] for i in node.input_slots]
        if node.needs_step:
            result = node.compute(self.context, *args, **node.kwargs)
        else:
            result = node.compute(*args, **node.kwargs)
        executor.store_outputs(node, self.values, result)
        executor.record(self.step.step_stats, node, self.plan.device, start,
                        time.perf_counter(), self.values)

    def _start_async(self, node):
        start = time.perf_counter()

        def done(result, error=None, label=""):
            step = self.step
            if error is not None:
                step.fail(node, error)
                return
            executor.store_outputs(node, self.values, result)
            if step.step_stats is not None:
                executor.record(step.step_stats, node, self.plan.device, start,
                                time.perf_counter(), self.values, label)
            self.dispatch(step.finish(self, node), False)

        try:
            node.compute(self.context, *[self.values[i] for i in node.input_slots], done=done,
                         **node.kwargs)
        except BaseException as exc:  # noqa: BLE001
            self.step.fail(node, exc)
