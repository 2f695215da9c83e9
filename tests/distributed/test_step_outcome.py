"""A master's step over several tasks records every task's answer before it returns, even when
the calls' completion callbacks run late (as they did under load: a call's result() returns as
soon as it is done, its callbacks run afterwards on another thread). Regression tests for
"The master returned no value for [...]" and for a deadline surfacing as CancelledError."""
import threading
import time
import types

import numpy as np
import pytest

from tensorweave.framework import errors
from tensorweave.distributed import interfaces
from tensorweave.distributed import master as master_lib
from tensorweave.distributed import master_session
from tensorweave.distributed.protos import worker_pb2

pytestmark = pytest.mark.timeout(30)
LATE_SECONDS = 0.3


class _LateCallbackCall(interfaces.Call):
    """Done from the start; its completion callbacks run LATE_SECONDS later on a thread
    (or at once when `late` is False)."""

    def __init__(self, value=None, error=None, late=True):
        self._value, self._error, self._late = value, error, late
        self.threads = []

    def result(self, timeout=None):
        if self._error is not None:
            raise self._error
        return self._value

    def add_done_callback(self, callback):
        if not self._late:
            callback(self)
            return

        def later():
            time.sleep(LATE_SECONDS)
            callback(self)
        thread = threading.Thread(target=later, daemon=True)
        thread.start()
        self.threads.append(thread)

    def cancel(self):
        pass


class _Worker:
    def __init__(self, call):
        self.call = call
        self.aborts = []

    def register_graph(self, request, timeout=None):
        return worker_pb2.RegisterGraphResponse(graph_handle="handle")

    def run_graph_async(self, request, feeds, timeout=None):
        return self.call

    def abort_step(self, request, timeout=None):
        self.aborts.append(request.error_code)

    def deregister_graph(self, request, timeout=None):
        return worker_pb2.DeregisterGraphResponse()


class _Cache(interfaces.WorkerCache):
    def __init__(self, workers):
        self.workers = workers

    def worker(self, task_name):
        return self.workers[task_name]

    def task_names(self):
        return sorted(self.workers)


def _plan(workers, fetches):
    env = master_lib.MasterEnv("/job:worker/replica:0/task:0", None, _Cache(workers))
    options = types.SimpleNamespace(data_planes=[], peer_timeout_in_ms=0, wire_encoding=0)
    parts = [types.SimpleNamespace(task=task, graph_def=None, fetch_names=fetches.get(task, []),
                                   feed_names=[]) for task in workers]
    return env, master_session.StepPlan(env, "session", options, parts, [], [])


def test_every_tasks_values_are_there_when_their_callbacks_run_late():
    calls = {f"/job:worker/replica:0/task:{i}": _LateCallbackCall(
        (worker_pb2.RunGraphResponse(), {f"t{i}:0": np.float32(i)})) for i in range(3)}
    env, plan = _plan({task: _Worker(call) for task, call in calls.items()},
                      {task: [f"t{i}:0"] for i, task in enumerate(calls)})
    fetched = plan.run(env, {}, 0, False, worker_pb2.RunGraphResponse())
    assert fetched == {"t0:0": 0.0, "t1:0": 1.0, "t2:0": 2.0}
    for call in calls.values():
        for thread in call.threads:
            thread.join(5)


def test_a_deadline_recorded_late_is_not_hidden_by_a_cancellation():
    cancelled = _LateCallbackCall(error=errors.CancelledError(None, None, "aborted"), late=False)
    deadline = _LateCallbackCall(error=errors.DeadlineExceededError(None, None, "deadline"))
    workers = {"/job:ps/replica:0/task:0": _Worker(cancelled),
               "/job:worker/replica:0/task:0": _Worker(deadline)}
    env, plan = _plan(workers, {})
    with pytest.raises(errors.DeadlineExceededError):
        plan.run(env, {}, 1000, False, worker_pb2.RunGraphResponse())
    for thread in deadline.threads:
        thread.join(5)
