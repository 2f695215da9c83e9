"""The interfaces between a master, the workers and their transports.

The master and worker logic (master.py, master_session.py, worker.py) talk to each other only
through these classes; a transport is an adapter that implements them: the in-process one
(inprocess.py) calls the other side directly, the gRPC one (grpc/) serializes. Requests and
responses are the protobuf messages of protos/worker.proto and protos/master.proto; tensor
values travel beside them as NumPy arrays (`feeds`, `fetches` dicts keyed by tensor name), so
that an in-process call never serializes a tensor and a remote one can choose how to move it
(inline, shared memory, a TCP stream: data_plane/).

Errors are `tensorweave.errors.OpError` subclasses on both sides of every transport.
"""
import abc
import threading

from tensorweave.framework import errors


class Call(abc.ABC):
    """An asynchronous call in flight: its result, completion callbacks and cancellation."""

    runs_inline = False  # True: `result()` runs the call on the caller's thread

    @abc.abstractmethod
    def result(self, timeout=None):
        """The call's result; raises its OpError."""

    @abc.abstractmethod
    def add_done_callback(self, callback):
        """Calls `callback(self)` once the call is done (at once if it is)."""

    @abc.abstractmethod
    def cancel(self):
        """Asks the call to stop; a cancelled call's result raises CancelledError."""


class CompletedCall(Call):
    """A call that already has its outcome."""

    def __init__(self, value=None, error=None):
        self._value = value
        self._error = error

    def result(self, timeout=None):
        if self._error is not None:
            raise self._error
        return self._value

    def add_done_callback(self, callback):
        callback(self)

    def cancel(self):
        pass


class FutureCall(Call):
    """A call completed by whoever runs it: `set_result(value)` or `set_error(error)`."""

    def __init__(self, on_cancel=None):
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._callbacks = []
        self._value = None
        self._error = None
        self._on_cancel = on_cancel

    def set_result(self, value):
        self._finish(value, None)

    def set_error(self, error):
        self._finish(None, error)

    def _finish(self, value, error):
        with self._lock:
            if self._done.is_set():
                return False
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
            # The cancel hook usually points back at the call that owns this future: drop the
            # cycle, so a finished call and the arrays it holds are freed by reference count.
            self._on_cancel = None
        for callback in callbacks:
            callback(self)
        return True

    def done(self):
        return self._done.is_set()

    def result(self, timeout=None):
        if not self._done.wait(timeout):
            raise errors.DeadlineExceededError(None, None, f"No reply within {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value

    def add_done_callback(self, callback):
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def cancel(self):
        on_cancel = self._on_cancel
        if on_cancel is not None and not self._done.is_set():
            on_cancel()
        self._finish(None, errors.CancelledError(None, None, "The call was cancelled."))


class WorkerInterface(abc.ABC):
    """What a master (and a peer worker) can ask of one task's worker service."""

    @abc.abstractmethod
    def get_status(self, timeout=None):
        """-> worker_pb2.GetStatusResponse (its devices, host and data-plane endpoints)."""

    @abc.abstractmethod
    def register_graph(self, request, timeout=None):
        """RegisterGraphRequest -> RegisterGraphResponse (a graph handle)."""

    @abc.abstractmethod
    def deregister_graph(self, request, timeout=None):
        """DeregisterGraphRequest -> DeregisterGraphResponse."""

    @abc.abstractmethod
    def run_graph_async(self, request, feeds, timeout=None):
        """RunGraphRequest plus {tensor name: array} -> a Call resolving to
        (RunGraphResponse, {tensor name: array} of the fetched tensors)."""

    @abc.abstractmethod
    def recv_tensor_async(self, request, timeout=None):
        """RecvTensorRequest -> a Call resolving to (array, transfer info dict: plane,
        wire_bytes, encoding, max_abs_error)."""

    def recv_tensors_async(self, requests, timeout=None):
        """Several RecvTensorRequests to this worker -> one Call per request. Transports that
        can carry them in one round trip override this."""
        return [self.recv_tensor_async(request, timeout) for request in requests]

    @abc.abstractmethod
    def cleanup_graph(self, request, timeout=None):
        """CleanupGraphRequest: forget a step's rendezvous state."""

    @abc.abstractmethod
    def abort_step(self, request, timeout=None):
        """AbortStepRequest: fail a step on this worker (its Recvs return the error)."""

    @abc.abstractmethod
    def cleanup_all(self, request, timeout=None):
        """CleanupAllRequest: clear resource containers (and drop registered graphs)."""

    @abc.abstractmethod
    def shutdown(self, request, timeout=None):
        """ShutdownRequest: stop the server (its join() returns)."""


class MasterInterface(abc.ABC):
    """What a client session asks of a master."""

    @abc.abstractmethod
    def create_session(self, request, timeout=None):
        """CreateSessionRequest -> CreateSessionResponse."""

    @abc.abstractmethod
    def extend_session(self, request, timeout=None):
        """ExtendSessionRequest -> ExtendSessionResponse."""

    @abc.abstractmethod
    def run_step(self, request, feeds, timeout=None, cancellation=None):
        """RunStepRequest plus {tensor name: array} -> (RunStepResponse, {name: array})."""

    @abc.abstractmethod
    def close_session(self, request, timeout=None):
        """CloseSessionRequest -> CloseSessionResponse."""

    @abc.abstractmethod
    def list_devices(self, request, timeout=None):
        """ListDevicesRequest -> ListDevicesResponse."""

    @abc.abstractmethod
    def reset(self, request, timeout=None):
        """ResetRequest -> ResetResponse."""


class WorkerCache(abc.ABC):
    """How a task reaches the others: task name -> WorkerInterface."""

    @abc.abstractmethod
    def worker(self, task_name):
        """The WorkerInterface of `task_name` (`/job:J/replica:0/task:T`); raises
        InvalidArgumentError for a task the cluster does not have."""

    @abc.abstractmethod
    def task_names(self):
        """Every task this cache can reach."""

    def close(self):
        """Releases channels."""
