"""Liveness of the tasks a running step waits on.

A killed task is noticed at once (its connections fail), but a task that hangs (stopped,
swapped out, its host gone without a reset) keeps connections open and a step waiting on it
would wait forever when it has no deadline. One watchdog thread per master pings (GetStatus,
over gRPC) every remote task a step still waits on once the step has waited for half of its
peer timeout, and fails the step with UnavailableError, on every task, when a task does not
answer within the peer timeout (RPCOptions.peer_timeout_in_ms, default
config.PEER_TIMEOUT_SECONDS). A step costs the watchdog a dict entry; pings happen only for
steps that last.
"""
import threading
import time

from tensorweave.framework import errors

_TICK_SECONDS = 0.25


class StepWatchdog:
    def __init__(self, env):
        self._env = env
        self._steps = {}
        self._lock = threading.Lock()
        self._thread = None

    def watch(self, key, outcome, peer_timeout):
        """Watches `outcome` (a master_session._StepOutcome) until `unwatch(key)`."""
        with self._lock:
            self._steps[key] = [outcome, peer_timeout, time.monotonic(), set()]
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="tensorweave step watchdog")
                self._thread.start()

    def unwatch(self, key):
        with self._lock:
            self._steps.pop(key, None)

    def _run(self):
        while True:
            time.sleep(_TICK_SECONDS)
            now = time.monotonic()
            with self._lock:
                due = [(outcome, timeout, pinging) for outcome, timeout, started, pinging
                       in self._steps.values() if now - started >= timeout / 2]
            for outcome, timeout, pinging in due:
                for task in outcome.pending_tasks():
                    if task != self._env.local_task and task not in pinging:
                        pinging.add(task)
                        self._env.submit(lambda t=task, o=outcome, s=timeout, p=pinging:
                                         self._ping(t, o, s, p))

    def _ping(self, task, outcome, timeout, pinging):
        try:
            self._env.worker_cache.worker(task).get_status(timeout)
        except errors.OpError as exc:
            if task in outcome.pending_tasks():
                outcome.give_up(task, errors.UnavailableError(
                    None, None, f"Task {task} stopped answering ({exc.message}); the step "
                    f"waited on it for more than the peer timeout of {timeout:.1f} s "
                    "(RPCOptions.peer_timeout_in_ms)"))
        finally:
            pinging.discard(task)
