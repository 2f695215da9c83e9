"""The in-process transport: WorkerInterface and MasterInterface by direct calls.

A server reaches its own task this way (no RPC for the master's own partitions), and
`InProcessCluster` builds a whole cluster in one process with no network at all, so that the
master and worker logic can be tested on their own (tests/distributed/test_inprocess.py).
Tensors crossing tasks still go through the session's wire encoding, so numbers match the gRPC
transport's exactly.
"""
import concurrent.futures
import threading

from tensorweave.framework import errors
from tensorweave.distributed import interfaces
from tensorweave.distributed import master as master_lib
from tensorweave.distributed import wire
from tensorweave.distributed import worker as worker_lib
from tensorweave.distributed.protos import worker_pb2

# Calls to other in-process tasks run here; blocking calls (RecvTensor waits for its sender)
# need a thread each, so the pool is large and grows on demand.
_POOL = concurrent.futures.ThreadPoolExecutor(256, "tensorweave in-process call")


class InlineCall(interfaces.Call):
    """Runs `fn` on the thread that first asks for the result (the master's own task)."""

    runs_inline = True

    def __init__(self, fn):
        self._fn = fn
        self._future = interfaces.FutureCall()
        self._started = False
        self._lock = threading.Lock()

    def result(self, timeout=None):
        with self._lock:
            start, self._started = not self._started, True
        if start:
            try:
                self._future.set_result(self._fn())
            except errors.OpError as exc:
                self._future.set_error(exc)
        return self._future.result(timeout)

    def add_done_callback(self, callback):
        self._future.add_done_callback(callback)

    def cancel(self):
        with self._lock:
            if self._started:
                return
            self._started = True
        self._future.cancel()


def _background(fn):
    call = interfaces.FutureCall()

    def run():
        try:
            call.set_result(fn())
        except errors.OpError as exc:
            call.set_error(exc)
        except Exception as exc:  # noqa: BLE001 - a bug must not leave the caller waiting
            call.set_error(errors.InternalError(None, None, f"{type(exc).__name__}: {exc}"))

    _POOL.submit(run)
    return call


class InProcessWorker(interfaces.WorkerInterface):
    """A Worker in this process; `inline` runs RunGraph on the master's thread."""

    def __init__(self, worker, inline=False):
        self.worker = worker
        self.inline = inline

    def get_status(self, timeout=None):
        return self.worker.get_status()

    def register_graph(self, request, timeout=None):
        return self.worker.register_graph(request)

    def deregister_graph(self, request, timeout=None):
        return self.worker.deregister_graph(request)

    def run_graph_async(self, request, feeds, timeout=None):
        def run():
            return self.worker.run_graph(request, feeds)
        return InlineCall(run) if self.inline else _background(run)

    def recv_tensor_async(self, request, timeout=None):
        def run():
            value = self.worker.recv_tensor(request.step_id, request.rendezvous_key, timeout)
            payload = wire.encode(value, request.wire_encoding)
            info = {"plane": "in-process", "wire_bytes": payload.nbytes,
                    "encoding": wire.ENCODING_NAMES[payload.header.encoding],
                    "max_abs_error": payload.header.max_abs_error}
            if payload.header.encoding != wire.RAW:
                value = wire.decode(payload.header, payload.data)
            return value, info
        return _background(run)

    def cleanup_graph(self, request, timeout=None):
        self.worker.cleanup_graph(request.step_id)
        return worker_pb2.CleanupGraphResponse()

    def abort_step(self, request, timeout=None):
        self.worker.abort_step(request.step_id, worker_lib.error_from_status(
            request.error_code, request.error_message))
        return worker_pb2.AbortStepResponse()

    def cleanup_all(self, request, timeout=None):
        self.worker.cleanup_all(request.container)
        return worker_pb2.CleanupAllResponse()

    def shutdown(self, request, timeout=None):
        raise errors.UnimplementedError(None, None, "An in-process worker has no server to "
                                        "shut down")


class InProcessMaster(interfaces.MasterInterface):
    def __init__(self, master):
        self.master = master

    def create_session(self, request, timeout=None):
        return self.master.create_session(request)

    def extend_session(self, request, timeout=None):
        return self.master.extend_session(request)

    def run_step(self, request, feeds, timeout=None, cancellation=None):
        return self.master.run_step(request, feeds, cancellation)

    def close_session(self, request, timeout=None):
        return self.master.close_session(request)

    def list_devices(self, request, timeout=None):
        return self.master.list_devices(request)

    def reset(self, request, timeout=None):
        return self.master.reset(request)


class InProcessWorkerCache(interfaces.WorkerCache):
    """Task name -> InProcessWorker, over a dict of Workers; `local_task` runs inline."""

    def __init__(self, workers, local_task=None):
        self._workers = workers
        self.local_task = local_task

    def worker(self, task_name):
        worker = self._workers.get(task_name)
        if worker is None:
            raise errors.InvalidArgumentError(None, None, f"No task {task_name} in the cluster "
                                              f"(tasks: {sorted(self._workers)})")
        return InProcessWorker(worker, inline=task_name == self.local_task)

    def task_names(self):
        return sorted(self._workers)


class InProcessCluster:
    """Every task of `cluster` (a ClusterSpec) in this process, joined by direct calls. Each
    task's master is registered under its address, so `tf.Session("grpc://" + address)`
    reaches it without any network."""

    def __init__(self, cluster, config=None):
        from tensorweave.distributed import task_services
        self.cluster = cluster
        self._workers = {}
        self.tasks = {}
        for name in cluster.task_names():
            cache = InProcessWorkerCache(self._workers, local_task=name)
            services = task_services.TaskServices(cluster, name, cache, config)
            self._workers[name] = services.worker
            self.tasks[name] = services
            master_lib.register_local_master({cluster.address_of(name)}, services.master)

    def master(self, task_name):
        return InProcessMaster(self.tasks[task_name].master)

    def target(self, job, index):
        return "grpc://" + self.cluster.task_address(job, index)

    def close(self):
        for services in self.tasks.values():
            master_lib.unregister_local_master(services.master)
            services.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
