"""`tf.summary.FileWriter`: writes summaries, the graph and traced steps into a TensorBoard
event file.

Callers never wait for the disk: events go into a bounded queue (`max_queue`; a full queue
makes add_* wait) that a background thread writes, flushing the file every `flush_secs` and
whenever `flush()` is called. `close()` writes what is queued, joins the thread and closes the
file; `reopen()` starts a new file. Only the first value of each tag keeps its
SummaryMetadata, as TensorBoard needs it once per tag and run. Writers a program never closes
are flushed when the interpreter exits (TF's writer loses nothing there either; TF 1.x
tutorials end without close()).
"""
import atexit
import os
import queue
import threading
import time
import weakref

import numpy as np

from tensorweave.framework import data_parallel
from tensorweave.framework import event_file
from tensorweave.framework import tfrecord
from tensorweave.framework.protos import summary_pb2

_CLOSE = object()  # the queue's end marker
_OPEN_WRITERS = weakref.WeakSet()


@atexit.register
def _flush_open_writers():
    """At exit the writer threads (daemons) still run, so queued events can reach the file."""
    for writer in list(_OPEN_WRITERS):
        try:
            writer.flush()
        except OSError:
            pass  # a full disk at exit: nothing left to report it to


class EventFileWriter:
    """Writes Event protos to a new event file in `logdir` from a background thread."""

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=None):
        self._logdir = str(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._filename_suffix = filename_suffix
        self._closed = True
        self._open()

    def _open(self):
        os.makedirs(self._logdir, exist_ok=True)
        self._path = event_file.event_file_path(self._logdir, self._filename_suffix)
        self._records = tfrecord.TFRecordWriter(self._path)
        self._file_lock = threading.Lock()  # the thread writes while flush() may flush
        self._error = None
        self._queue = queue.Queue(self._max_queue)
        self._write(summary_pb2.Event(wall_time=time.time(),
                                      file_version=event_file.FILE_VERSION))
        self._records.flush()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"EventFileWriter({os.path.basename(self._path)})")
        self._closed = False
        self._thread.start()
        _OPEN_WRITERS.add(self)

    @property
    def path(self):
        return self._path

    def get_logdir(self):
        return self._logdir

    def add_event(self, event):
        """Queues `event`; ignored once the writer is closed (as in TF)."""
        if not self._closed:
            self._queue.put(event)

    def _write(self, *events):
        with self._file_lock:
            for event in events:
                self._records.write(event.SerializeToString())

    def _flush_file(self):
        with self._file_lock:
            self._records.flush()

    def _next_batch(self, timeout):
        """The queued events: waits up to `timeout` for one, then takes the rest that are
        there (one wake-up per batch, not per event: a fast producer is not held back)."""
        try:
            batch = [self._queue.get(timeout=timeout)]
        except queue.Empty:
            return []
        while batch[-1] is not _CLOSE:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _run(self):
        next_flush = time.monotonic() + self._flush_secs
        while True:
            batch = self._next_batch(max(next_flush - time.monotonic(), 0.0))
            try:
                events = [item for item in batch if item is not _CLOSE]
                if events and self._error is None:
                    self._write(*events)
                if len(events) < len(batch):
                    return
                if time.monotonic() >= next_flush:
                    self._flush_file()
                    next_flush = time.monotonic() + self._flush_secs
            except OSError as error:  # a full disk: reported by the next flush() or close()
                self._error = error
            finally:
                for _ in batch:
                    self._queue.task_done()

    def _raise_thread_error(self):
        if self._error is not None:
            error, self._error = self._error, None
            raise OSError(f"writing the event file {self._path} failed: {error}") from error

    def flush(self):
        """Writes every queued event and flushes the file."""
        if self._closed:
            return
        self._queue.join()
        self._flush_file()
        self._raise_thread_error()

    def close(self):
        """Writes what is queued, stops the thread and closes the file."""
        if self._closed:
            return
        self._closed = True
        _OPEN_WRITERS.discard(self)
        self._queue.put(_CLOSE)
        self._thread.join()
        with self._file_lock:
            self._records.close()
        self._raise_thread_error()

    def reopen(self):
        """After close(): continue in a new event file."""
        if self._closed:
            self._open()


class DiscardingEventWriter:
    """The event writer of a process that must not write summaries (a rank other than 0 in
    transparent mode, framework/data_parallel): it accepts events and writes nothing."""

    def __init__(self, logdir):
        self._logdir = str(logdir)
        self.path = None

    def get_logdir(self):
        return self._logdir

    def add_event(self, event):
        pass

    def flush(self):
        pass

    def close(self):
        pass

    def reopen(self):
        pass


def _summary_proto(summary):
    """A Summary this writer may change: parsed from bytes, or a copy of the caller's."""
    if isinstance(summary, summary_pb2.Summary):
        copy = summary_pb2.Summary()
        copy.CopyFrom(summary)
        return copy
    if isinstance(summary, np.ndarray):  # a fetched string scalar
        summary = summary.reshape(-1)[0]
    if isinstance(summary, (bytes, bytearray)):
        return summary_pb2.Summary.FromString(bytes(summary))
    if hasattr(summary, "SerializeToString"):  # another package's Summary message
        return summary_pb2.Summary.FromString(summary.SerializeToString())
    raise TypeError(f"add_summary takes a Summary or its serialized bytes (the value of a "
                    f"summary op), got {type(summary).__name__}")


def run_metadata_proto(run_metadata):
    """A RunMetadata proto from the session's RunMetadata (runtime/config.py)."""
    if hasattr(run_metadata, "SerializeToString"):
        return summary_pb2.RunMetadata.FromString(run_metadata.SerializeToString())
    proto = summary_pb2.RunMetadata()
    for device_stats in run_metadata.step_stats.dev_stats:
        device = proto.step_stats.dev_stats.add(device=device_stats.device)
        for node in device_stats.node_stats:
            device.node_stats.add(
                node_name=node.node_name, all_start_micros=node.all_start_micros,
                op_start_rel_micros=node.op_start_rel_micros,
                op_end_rel_micros=node.op_end_rel_micros,
                all_end_rel_micros=node.all_end_rel_micros, timeline_label=node.timeline_label)
    for graph_def in run_metadata.partition_graphs or ():
        proto.partition_graphs.add().MergeFromString(graph_def.SerializeToString())
    return proto


class FileWriter:
    """`tf.summary.FileWriter(logdir, graph=None, max_queue=10, flush_secs=120,
    graph_def=None, filename_suffix=None)`."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise ValueError("FileWriter(session=...) is TF 2's summary API, which tensorweave "
                             "does not have; write with tf.summary ops and add_summary")
        if data_parallel.policy().writes_files():
            self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        else:
            self.event_writer = DiscardingEventWriter(logdir)
        self._seen_summary_tags = set()
        self._run_metadata_tags = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def _add_event(self, event, global_step):
        event.wall_time = time.time()
        if global_step is not None:
            event.step = int(global_step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None):
        """Writes a Summary (proto, or the bytes a summary op returns) at `global_step`."""
        summary = _summary_proto(summary)
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
            else:
                self._seen_summary_tags.add(value.tag)
        self._add_event(summary_pb2.Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None):
        self._add_event(summary_pb2.Event(session_log=session_log), global_step)

    def add_event(self, event):
        """Writes `event` as it is (its wall_time and step are the caller's)."""
        self.event_writer.add_event(event)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes the GraphDef of `graph` (a Graph, or a GraphDef) for TensorBoard's graph
        view."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        source = graph if graph is not None else graph_def
        if hasattr(source, "as_graph_def"):
            source = source.as_graph_def(add_shapes=True)
        if not hasattr(source, "SerializeToString"):
            raise TypeError(f"add_graph takes a tf.Graph or a GraphDef, got "
                            f"{type(source).__name__}")
        self._add_event(summary_pb2.Event(graph_def=source.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes a traced step (`tf.RunMetadata` filled by `session.run(...,
        options=RunOptions(trace_level=FULL_TRACE), run_metadata=...)`) under `tag`."""
        if tag in self._run_metadata_tags:
            raise ValueError(f"The provided tag {tag!r} was already used for this event type")
        self._run_metadata_tags.add(tag)
        tagged = summary_pb2.TaggedRunMetadata(
            tag=tag, run_metadata=run_metadata_proto(run_metadata).SerializeToString())
        self._add_event(summary_pb2.Event(tagged_run_metadata=tagged), global_step)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
