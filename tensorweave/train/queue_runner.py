"""`tf.train.QueueRunner`: threads that keep running enqueue ops to fill a queue.

Each enqueue op gets a thread that runs it until the queue is closed (the op raises
OutOfRangeError or CancelledError, which is a normal end) or the coordinator asks to stop.
When the last of a session's enqueue threads ends, the runner closes the queue, so consumers
drain what is left and then see OutOfRangeError. With a coordinator, one more thread waits for
the stop request and cancels the queue (closing it with cancel_pending_enqueues), which
unblocks any enqueue waiting on a full queue. Any other error stops the coordinator.
"""
import threading

from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.protos.queue_runner_pb2 import QueueRunnerDef


class QueueRunner:
    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            if queue is not None or enqueue_ops:
                raise ValueError("QueueRunner: give either queue_runner_def or queue and "
                                 "enqueue_ops, not both")
            queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types = \
                _from_def(queue_runner_def, import_scope)
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (cancel_op if cancel_op is not None
                           else queue.close(cancel_pending_enqueues=True))
        self._queue_closed_exception_types = tuple(
            queue_closed_exception_types or (errors.OutOfRangeError, errors.CancelledError))
        self._lock = threading.Lock()
        self._runs_per_session = {}
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Errors the threads met without a coordinator to report them to."""
        return list(self._exceptions_raised)

    @property
    def name(self):
        return self._queue.name

    def to_proto(self, export_scope=None):
        """The QueueRunnerDef of this runner, names relative to `export_scope` (None when the
        queue is outside it)."""
        def relative(name):
            if not export_scope:
                return name
            prefix = export_scope + "/"
            return name[len(prefix):] if name.startswith(prefix) else None
        queue_name = relative(self._queue.name)
        if queue_name is None:
            return None
        return QueueRunnerDef(
            queue_name=queue_name,
            enqueue_op_name=[relative(op.name) for op in self._enqueue_ops],
            close_op_name=relative(self._close_op.name),
            cancel_op_name=relative(self._cancel_op.name),
            queue_closed_exception_types=[t.error_code
                                          for t in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """One thread per enqueue op (and one to cancel on stop, with `coord`); none if this
        runner's threads are already running for `sess`."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name=f"QueueRunner {self.name} {index}")
                   for index, op in enumerate(self._enqueue_ops)]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord),
                                            daemon=daemon, name=f"QueueRunner {self.name} stop"))
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            if start:
                thread.start()
        return threads

    def _run(self, sess, enqueue_op, coord):
        try:
            run_enqueue = sess.make_callable(enqueue_op)
            while coord is None or not coord.should_stop():
                try:
                    run_enqueue()
                except self._queue_closed_exception_types:
                    return
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator or kept
            if coord is not None:
                coord.request_stop(exc)
            else:
                with self._lock:
                    self._exceptions_raised.append(exc)
                raise
        finally:
            self._finish_one(sess)

    def _finish_one(self, sess):
        with self._lock:
            self._runs_per_session[sess] -= 1
            last = self._runs_per_session[sess] == 0
        if last:
            try:
                sess.run(self._close_op)
            except Exception:  # noqa: BLE001 - the session may already be closed
                pass

    def _close_on_stop(self, sess, coord):
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception:  # noqa: BLE001 - the session may already be closed
            pass


def _from_def(queue_runner_def, import_scope):
    """(queue, enqueue ops, close op, cancel op, exception types) named by a QueueRunnerDef,
    looked up in the default graph (under `import_scope`)."""
    graph = graph_lib.get_default_graph()

    def element(name):
        return graph.as_graph_element(f"{import_scope}/{name}" if import_scope else name)
    codes = queue_runner_def.queue_closed_exception_types
    types = [errors.exception_type_from_error_code(code) for code in codes] or None
    return (element(queue_runner_def.queue_name),
            [element(name) for name in queue_runner_def.enqueue_op_name],
            element(queue_runner_def.close_op_name), element(queue_runner_def.cancel_op_name),
            types)


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    graph_lib.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in `collection`; returns them."""
    if sess is None:
        sess = graph_lib.get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: no default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session.")
    threads = []
    for runner in sess.graph.get_collection(collection):
        threads.extend(runner.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
