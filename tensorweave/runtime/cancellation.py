"""Cancellation tokens: one per step, so that anything can stop the whole step.

A deadline, `Session.close()` or a failing op calls `cancel(error)` once; the first error wins
and is the one the step raises (a later cancellation, e.g. the `CancelledError` a Recv sees
because its sender failed, never hides the cause). Whatever may wait during a step (a Recv, a
queue dequeue, an accumulator's take) registers a callback that wakes it, and checks
`cancelled` when it wakes, so no thread stays blocked once a step is cancelled.
"""
import threading

from tensorweave.framework import errors


class CancellationToken:
    __slots__ = ("_lock", "_error", "_callbacks", "_next_id", "_event")

    def __init__(self):
        self._lock = threading.Lock()
        self._error = None
        self._callbacks = {}
        self._next_id = 0
        self._event = threading.Event()

    @property
    def cancelled(self):
        return self._error is not None

    @property
    def error(self):
        """The error that cancelled the step, or None."""
        return self._error

    def cancel(self, error=None):
        """Cancels the step with `error` (default CancelledError); True if this call did it."""
        if error is None:
            error = errors.CancelledError(None, None, "The step was cancelled.")
        with self._lock:
            if self._error is not None:
                return False
            self._error = error
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        self._event.set()
        for callback in callbacks:
            callback(error)
        return True

    def add_callback(self, callback):
        """Calls `callback(error)` on cancellation (at once if already cancelled); returns an id
        for `remove_callback`."""
        with self._lock:
            if self._error is None:
                self._next_id += 1
                self._callbacks[self._next_id] = callback
                return self._next_id
            error = self._error
        callback(error)
        return None

    def remove_callback(self, callback_id):
        if callback_id is not None:
            with self._lock:
                self._callbacks.pop(callback_id, None)

    def raise_if_cancelled(self):
        error = self._error
        if error is not None:
            raise error

    def wait(self, timeout=None):
        """Blocks until cancelled or `timeout` seconds pass; True if cancelled."""
        return self._event.wait(timeout)
