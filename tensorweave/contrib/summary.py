"""`tf.contrib.summary` (TF 1.x's TF 2-style summaries in graph mode): summary ops that write
to a default writer when recording is on, with the step given or the global step.

    writer = tf.contrib.summary.create_file_writer(logdir, flush_millis=10000)
    with writer.as_default(), tf.contrib.summary.always_record_summaries():
        tf.contrib.summary.scalar("loss", loss)
    ...
    tf.contrib.summary.initialize(graph=tf.get_default_graph(), session=sess)
    sess.run([train_op, tf.contrib.summary.all_summary_ops()])

Each summary op serialises a Summary with the tf.summary op of its kind and writes it, in the
process that built the graph, through the writer's FileWriter (a Python-function op), only
when the recording condition (a boolean tensor evaluated at run time) holds. With no default
writer a summary function gives a no-op, as TF's. `create_db_writer` (SQLite) is not
provided."""
import contextlib
import os
import threading

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import control_flow_ops, math_ops, summary_ops
from tensorweave.ops.cond_ops import cond
from tensorweave.ops.script_ops import py_func
from tensorweave.summary.writer import FileWriter
from tensorweave.train import training_util

SUMMARY_OPS_KEY = "_SUMMARY_V2"
_INIT_KEY = "_SUMMARY_WRITER_INIT_OP"
_state = threading.local()


def _stack(name):
    if not hasattr(_state, name):
        setattr(_state, name, [])
    return getattr(_state, name)


class SummaryWriter:
    """Writes summary events to `logdir` (the FileWriter is opened by the writer's init op,
    or by the first summary written)."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self._logdir = logdir
        self._options = {"max_queue": 10 if max_queue is None else int(max_queue),
                         "flush_secs": 120 if flush_millis is None else flush_millis / 1000.0,
                         "filename_suffix": filename_suffix}
        self._writer = None
        self._lock = threading.Lock()
        self._init_op = py_func(self._open_writer, [], [], name="create_summary_file_writer")
        graph_lib.add_to_collection(_INIT_KEY, self._init_op)

    def _open_writer(self):
        with self._lock:
            if self._writer is None:
                self._writer = FileWriter(self._logdir, **self._options)
            return self._writer

    def write(self, serialized, step):
        serialized = serialized.item() if hasattr(serialized, "item") else serialized
        self._open_writer().add_summary(serialized, int(step))
        return True

    @property
    def logdir(self):
        return self._logdir

    @contextlib.contextmanager
    def as_default(self):
        _stack("writers").append(self)
        try:
            yield self
        finally:
            _stack("writers").pop()

    def set_as_default(self):
        _stack("writers").append(self)

    def init(self):
        return self._init_op

    def flush(self):
        return py_func(lambda: self._flush_now(), [], [], name="flush_summary_writer")

    def _flush_now(self):
        if self._writer is not None:
            self._writer.flush()

    def close(self):
        """An op closing the event file (a later summary opens a new one)."""
        return py_func(lambda: self._close_now(), [], [], name="close_summary_writer")

    def _close_now(self):
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None):
    """A SummaryWriter for event files in `logdir` (None: one that writes nothing)."""
    if logdir is None:
        return _NoWriter()
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


create_summary_file_writer = create_file_writer


class _NoWriter:
    @contextlib.contextmanager
    def as_default(self):
        yield self

    def set_as_default(self):
        pass

    def init(self):
        return control_flow_ops.no_op()

    flush = close = init


def create_db_writer(db_uri, experiment_name=None, run_name=None, user_name=None, name=None):
    raise NotImplementedError("tf.contrib.summary.create_db_writer (SQLite summaries) is not "
                              "provided by tensorweave; use create_file_writer")


# --- when to record ----------------------------------------------------------------------
@contextlib.contextmanager
def _recording(condition):
    _stack("conditions").append(condition)
    try:
        yield
    finally:
        _stack("conditions").pop()


def always_record_summaries():
    return _recording(True)


def never_record_summaries():
    return _recording(False)


def record_summaries_every_n_global_steps(n, global_step=None):
    """Record when the global step is a multiple of n."""
    step = global_step if global_step is not None else training_util.get_or_create_global_step()
    return _recording(math_ops.equal(math_ops.mod(step, math_ops.cast(n, step.dtype)), 0))


def should_record_summaries():
    conditions = _stack("conditions")
    condition = conditions[-1] if conditions else False
    return convert_to_tensor(condition, dtype=dtypes.bool)


# --- the summary functions -----------------------------------------------------------------
def _write(name, serialize, step):
    writers = _stack("writers")
    if not writers or isinstance(writers[-1], _NoWriter):
        return control_flow_ops.no_op(name=f"{name}_no_writer")
    writer = writers[-1]
    if step is None:
        step = training_util.get_global_step()
        if step is None:
            raise ValueError("tf.contrib.summary: no step given and no global step exists")
    step = math_ops.cast(convert_to_tensor(step), dtypes.int64)

    def record():
        written = py_func(writer.write, [serialize(), step], dtypes.bool)
        written.set_shape([])
        return written

    result = cond(should_record_summaries(), record, lambda: constant(False))
    graph_lib.add_to_collection(SUMMARY_OPS_KEY, result)
    return result


def scalar(name, tensor, family=None, step=None):
    return _write(name, lambda: summary_ops.scalar(name, math_ops.cast(tensor, dtypes.float32),
                                                   collections=[], family=family), step)


def histogram(name, tensor, family=None, step=None):
    return _write(name, lambda: summary_ops.histogram(name, tensor, collections=[],
                                                      family=family), step)


def image(name, tensor, bad_color=None, max_images=3, family=None, step=None):
    return _write(name, lambda: summary_ops.image(name, tensor, max_outputs=max_images,
                                                  collections=[], family=family), step)


def audio(name, tensor, sample_rate, max_outputs, family=None, step=None):
    return _write(name, lambda: summary_ops.audio(name, tensor, sample_rate,
                                                  max_outputs=max_outputs, collections=[],
                                                  family=family), step)


def generic(name, tensor, metadata=None, family=None, step=None):
    return _write(name, lambda: summary_ops.tensor_summary(name, tensor,
                                                           summary_metadata=metadata,
                                                           collections=[], family=family),
                  step)


# --- initialising, collecting, flushing --------------------------------------------------------
def all_summary_ops():
    return graph_lib.get_collection(SUMMARY_OPS_KEY)


def summary_writer_initializer_op():
    return graph_lib.get_collection(_INIT_KEY)


def initialize(graph=None, session=None):
    """Runs the writers' initialisers in `session` (the default one when None) and writes
    `graph` (a Graph or GraphDef) to the default writer's event file."""
    if session is None:
        session = graph_lib.get_default_session()
        if session is None:
            raise ValueError("tf.contrib.summary.initialize: no session given and no default "
                             "session")
    session.run(summary_writer_initializer_op())
    writers = _stack("writers")
    if graph is not None and writers and isinstance(writers[-1], SummaryWriter):
        writer = writers[-1]._open_writer()
        graph_def = graph.as_graph_def() if hasattr(graph, "as_graph_def") else graph
        writer.add_graph(None, graph_def=graph_def)


def flush(writer=None, name=None):
    writers = _stack("writers")
    writer = writer or (writers[-1] if writers else None)
    return writer.flush() if writer is not None else control_flow_ops.no_op(name=name)


def eval_dir(model_dir, name=None):
    """Where an Estimator writes its evaluation summaries."""
    return os.path.join(model_dir, "eval" if not name else "eval_" + name)
