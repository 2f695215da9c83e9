"""`tf.GradientTape` in graph mode, as TF 1.x runs it there: the tape records the ops built
inside its `with` block (except under `stop_recording()`), and `gradient(target, sources)`
differentiates `target` through the recorded ops only, by tf.gradients with every input that
reaches a recorded op from outside the tape treated as a constant. A source must be watched:
`tape.watch(tensor)`, or a variable (every variable counts as accessed unless
watch_accessed_variables=False, as TF watches the trainable variables a block reads); an
unwatched source gets None (zeros with unconnected_gradients=ZERO). A variable's read
(snapshot) op belongs to the variable, wherever it was built. Unlike TF, ops built after the
block (e.g. a slice of the target taken later) are differentiated through too; ops built
before it, or under stop_recording(), are not. The results are graph tensors to run in a
session.
"""
import contextlib

from tensorweave.framework import constant_op, dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import nest
from tensorweave.ops import array_ops, gradients as gradients_lib, variables as variables_lib

_NON_PERSISTENT = ("A non-persistent GradientTape can only be used to compute one set of "
                   "gradients (or jacobians): make it with persistent=True to call it again")


def _is_variable(value):
    return isinstance(value, variables_lib.Variable)


class GradientTape:
    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._graph = None
        self._spans = []       # [first op id, last op id] ranges recorded
        self._open = None      # the first op id of the span being recorded
        self._watched = []     # tensors and variables
        self._used = False

    # --- recording --------------------------------------------------------------------------
    def __enter__(self):
        if self._open is not None:
            raise ValueError("GradientTape: this tape is already recording (a tape cannot be "
                             "entered twice at once)")
        self._graph = graph_lib.get_default_graph()
        self._open = self._graph.version + 1
        return self

    def __exit__(self, *exc):
        self._close_span()

    def _close_span(self):
        if self._open is not None:
            self._spans.append((self._open, self._graph.version))
            self._open = None

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops built inside are not recorded (gradients do not flow through them)."""
        if self._open is None:
            raise ValueError("GradientTape.stop_recording: the tape is not recording (use it "
                             "inside the tape's with block)")
        self._close_span()
        try:
            yield
        finally:
            self._open = self._graph.version + 1

    def reset(self):
        """Forgets everything recorded so far (recording goes on when inside the block)."""
        recording = self._open is not None
        self._spans, self._watched, self._used = [], [], False
        self._open = self._graph.version + 1 if recording else None

    def watch(self, tensor):
        """Marks `tensor` (a nest of tensors or variables) as a source to differentiate by."""
        for item in nest.flatten(tensor):
            if not (_is_variable(item) or isinstance(item, graph_lib.Tensor)):
                raise ValueError(f"GradientTape.watch: expected tensors or variables, got "
                                 f"{type(item).__name__}")
            if item.dtype.base_dtype.is_floating or item.dtype.base_dtype.is_complex:
                self._watched.append(item)

    def watched_variables(self):
        """The variables watched: explicitly, or read by a recorded op."""
        found = [v for v in self._watched if _is_variable(v)]
        if self._watch_accessed_variables:
            read = {t for op in self._recorded_ops() for t in op.inputs}
            found += [v for v in self._graph_variables()
                      if (v._variable in read or v._snapshot in read) and
                      not any(v is w for w in found)]
        return tuple(found)

    # --- differentiation --------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        """d target / d sources (nests of the same structure as `sources`)."""
        self._check_use()
        flat_sources = nest.flatten(sources)
        targets = nest.flatten(target)
        if output_gradients is not None:
            output_gradients = nest.flatten(output_gradients)
        watched = [self._is_watched(s) for s in flat_sources]
        zero = getattr(unconnected_gradients, "value", unconnected_gradients) == "zero"
        results = [None] * len(flat_sources)
        picked = [s for s, ok in zip(flat_sources, watched) if ok]
        if picked:
            grads = gradients_lib.gradients(
                targets, picked, grad_ys=output_gradients, stop_gradients=self._outside(),
                unconnected_gradients=unconnected_gradients, name="GradientTape")
            grads = iter(grads)
            results = [next(grads) if ok else None for ok in watched]
        if zero:
            results = [array_ops.zeros_like(s) if g is None else g
                       for s, g in zip(flat_sources, results)]
        return nest.pack_sequence_as(sources, results)

    def jacobian(self, target, sources, unconnected_gradients="none",
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...], shaped target.shape + source.shape (target's
        shape must be known when the graph is built)."""
        self._check_use()
        target = self._as_tensor(target)
        shape = self._static_shape(target, "jacobian", "target")
        flat = array_ops.reshape(target, [-1])
        rows = [self._gradient_once(flat[i], sources, unconnected_gradients)
                for i in range(_product(shape))]
        return nest.pack_sequence_as(sources, [
            self._stack(column, shape, source)
            for source, column in zip(nest.flatten(sources), zip(*rows))])

    def batch_jacobian(self, target, source, unconnected_gradients="none",
                       parallel_iterations=None, experimental_use_pfor=True):
        """d target[b, i...] / d source[b, j...], shaped [batch] + target.shape[1:] +
        source.shape[1:]: each example's target depends on its own example of the source
        only (as TF assumes)."""
        self._check_use()
        target = self._as_tensor(target)
        shape = self._static_shape(target, "batch_jacobian", "target")
        if len(shape) < 1:
            raise ValueError("GradientTape.batch_jacobian: target must have a batch "
                             "dimension (rank >= 1)")
        rows_per_example = _product(shape[1:])
        flat = array_ops.reshape(target, [shape[0], rows_per_example])
        columns = []
        for i in range(rows_per_example):
            (grad,) = self._gradient_once(flat[:, i], [source], unconnected_gradients)
            columns.append(array_ops.zeros_like(source) if grad is None else grad)
        stacked = array_ops.stack(columns, axis=1)  # [batch, target rest flat, source rest]
        return array_ops.reshape(stacked, array_ops.concat(
            [_dims(shape), array_ops.shape(source)[1:]], 0))

    # --- helpers ----------------------------------------------------------------------------
    def _gradient_once(self, target, sources, unconnected_gradients):
        used, self._used = self._used, False
        try:
            return nest.flatten(self.gradient(target, sources,
                                              unconnected_gradients=unconnected_gradients))
        finally:
            self._used = used

    def _stack(self, column, shape, source):
        if all(g is None for g in column):
            return None
        parts = [array_ops.zeros_like(source) if g is None else g for g in column]
        return array_ops.reshape(array_ops.stack(parts), array_ops.concat(
            [_dims(shape), array_ops.shape(source)], 0))

    def _check_use(self):
        if self._graph is None:
            raise ValueError("GradientTape: nothing was recorded (build the computation inside "
                             "`with tf.GradientTape() as tape:`)")
        if self._used and not self._persistent:
            raise RuntimeError(_NON_PERSISTENT)
        self._used = True

    @staticmethod
    def _as_tensor(value):
        return value.value() if _is_variable(value) else value

    @staticmethod
    def _static_shape(tensor, method, what):
        if tensor.shape.ndims is None or not tensor.shape.is_fully_defined():
            raise ValueError(f"GradientTape.{method}: the {what}'s shape must be known when "
                             f"the graph is built, got {tensor.shape}")
        return tensor.shape.as_list()

    def _is_watched(self, source):
        if _is_variable(source):
            return self._watch_accessed_variables or any(source is w for w in self._watched)
        return any(source is w for w in self._watched)

    def _recorded_ops(self):
        spans = self._spans + ([(self._open, self._graph.version)] if self._open else [])
        return [op for op in self._graph.get_operations()
                if any(first <= op._id <= last for first, last in spans)]

    def _graph_variables(self):
        return variables_lib.global_variables() + variables_lib.local_variables()

    def _outside(self):
        """The tensors fed into recorded ops from unrecorded ones: constants to the tape,
        except watched tensors and the variables (their storage and snapshot)."""
        recorded = self._recorded_ops()
        inside = set(recorded)
        keep = {w for w in self._watched if isinstance(w, graph_lib.Tensor)}
        for var in self._graph_variables():
            if self._is_watched(var):
                keep.update((var._variable, var._snapshot))
        return [t for op in recorded for t in op.inputs
                if t.op not in inside and t not in keep]


def _dims(shape):
    return constant_op.constant(list(shape), dtype=dtypes.int32, shape=[len(shape)])


def _product(dims):
    total = 1
    for dim in dims:
        total *= dim
    return total
