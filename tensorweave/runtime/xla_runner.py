"""Running one XLA cluster (runtime/xla.py): the compiled step, its variables kept as device
buffers, and the NumPy path it falls back to.

The cluster's function is traced once per input shapes and dtypes (jax.jit keeps one
executable per signature; `traces` counts them) and called with the variables it updates and
reads as buffers: `fn(updated, read_only, inputs) -> (outputs, new values of updated)`, the
updated ones donated, so XLA writes their new values where the old ones were.
"""
import logging

import numpy as np

from tensorweave.kernels import registry as kernel_registry
from tensorweave.runtime import resources, xla

_log = logging.getLogger(__name__)


_READS = ("Identity", "StopGradient")


class DeviceValue:
    """A variable's value as a device buffer (VariableCell.device). `stale`: the cell's host
    array is older than the buffer."""

    __slots__ = ("array", "stale")

    def __init__(self, array, stale):
        self.array = array
        self.stale = stale

    def to_host(self, host):
        return np.array(self.array) if self.stale else host  # a writable copy of its own


class ClusterRunner:
    """The compute of a cluster's plan node: `runner(*input values) -> output value(s)`."""

    def __init__(self, cluster, manager):
        self.jax, lowerings = xla.backend()
        self.cluster = cluster
        self.manager = manager
        self.single = len(cluster.outputs) == 1
        cells = {op: resources.variable_cell(manager, op) for op in cluster.variables}
        self._steps = []  # (op, kernel, attrs, lowering, ref variables) in trace order
        # Tensors that are a variable's storage: its VariableV2 output, and Identity reads of
        # it (`w/read`), which on the NumPy path alias the array that updates write in place,
        # so a consumer ordered after an update sees the new value: here they read the
        # variable's current value where they are consumed.
        self._aliases = {var.outputs[0]: var for var in cluster.variables}
        read, written = [], []
        for op in cluster.trace_ops:
            if op.type == "VariableV2":
                continue
            if op.type in _READS and op.inputs[0] in self._aliases:
                self._aliases[op.outputs[0]] = self._aliases[op.inputs[0]]
                continue
            kernel = kernel_registry.get_kernel(op.type)
            refs = kernel.num_refs if kernel.resource == "variable_ref" else 0
            ref_vars = [t.op for t in op.inputs[:refs]]
            lower = (lowerings.REF_LOWERINGS if refs else lowerings.LOWERINGS).get(op.type)
            attrs = {name: op.get_attr(name) for name in kernel.attr_names}
            self._steps.append((op, kernel, attrs, lower, ref_vars))
            for tensor in op.inputs:
                assigned = tensor in op.inputs[:refs] and op.type == "Assign"
                var = self._variable_of(tensor)
                if var is not None and not assigned and var not in written and var not in read:
                    read.append(var)
            for var in ref_vars:
                if var not in written:
                    written.append(var)
        self._donated = [v for v in written if v in read]
        self._read_only = [v for v in read if v not in written]
        self._written_only = [v for v in written if v not in read]
        self._updated = self._donated + self._written_only
        self._cells = cells
        self._locks = [cells[v].lock for v in sorted(self._updated + self._read_only,
                                                      key=lambda op: op.name)]
        self._dtypes = {v: cells[v].dtype.np_dtype for v in cluster.variables}
        self._label_checks = self._sparse_label_checks()
        self._failed = set()  # input signatures whose tracing failed: NumPy for those
        self._fallback = None
        self.traces = 0      # how many signatures were traced (and compiled)
        self.numpy_steps = 0  # steps run on the NumPy kernels instead
        self._fn = self.jax.jit(self._trace, donate_argnums=(0,))

    def _variable_of(self, tensor):
        """The VariableV2 op whose storage `tensor` is, or None."""
        if tensor.op.type == "VariableV2":
            return tensor.op
        return self._aliases.get(tensor)

    def _sparse_label_checks(self):
        """(input position, classes) of every sparse cross entropy reading its labels from
        the step: a compiled step cannot raise on a label out of range, the NumPy kernel does."""
        checks = []
        for op, *_ in self._steps:
            if op.type == "SparseSoftmaxCrossEntropyWithLogits" and \
                    op.inputs[1] in self.cluster.inputs:
                checks.append((self.cluster.inputs.index(op.inputs[1]), op.inputs[0]))
        return checks

    # --- the traced function -------------------------------------------------------------
    def _trace(self, updated, read_only, inputs):
        self.traces += 1
        env = dict(zip(self.cluster.inputs, inputs))
        state = dict(zip(self._donated, updated))
        state.update(zip(self._read_only, read_only))
        aliases = self._aliases

        def read(tensor):
            return state[aliases[tensor]] if tensor in aliases else env[tensor]

        for op, kernel, attrs, lower, ref_vars in self._steps:
            args = [read(t) for t in op.inputs[len(ref_vars):]]
            if ref_vars:
                current = [state.get(v) for v in ref_vars]
                new = lower(*current, *args, **attrs)
                for var, value in zip(ref_vars, new):
                    state[var] = self.jax.numpy.asarray(value, dtype=self._dtypes[var])
                if op.outputs:
                    env[op.outputs[0]] = state[ref_vars[0]]
                continue
            if kernel.resource is None and (op.type in xla.ALWAYS_STATIC or all(
                    isinstance(a, (np.ndarray, np.generic)) for a in args)):
                result = kernel.compute(*args, **attrs)  # known now: fold it as NumPy does
            else:
                result = lower(*args, **attrs)
            if len(op.outputs) == 1:
                env[op.outputs[0]] = result
            else:
                for tensor, value in zip(op.outputs, result):
                    env[tensor] = value
        outputs = tuple(np.asarray(v) if isinstance(v, np.generic) else v
                        for v in map(read, self.cluster.outputs))
        return outputs, tuple(state[v] for v in self._updated)

    # --- one step ------------------------------------------------------------------------
    def __call__(self, *inputs):
        if self._failed and self._signature(inputs) in self._failed:
            return self._run_numpy(inputs)
        for position, logits in self._label_checks:
            labels, classes = np.asarray(inputs[position]), logits.shape.as_tuple()
            if labels.size and (classes is None or classes[-1] is None or labels.min() < 0 or
                                labels.max() >= classes[-1]):
                return self._run_numpy(inputs)
        # The cells' locks keep two steps from donating one buffer, and a reader on another
        # thread from copying a buffer being donated (VariableCell.value takes the lock too).
        for lock in self._locks:
            lock.acquire()
        try:
            outputs = self._run_compiled(inputs)
        finally:
            for lock in reversed(self._locks):
                lock.release()
        if outputs is None:
            return self._run_numpy(inputs)
        return outputs[0] if self.single else outputs

    def _run_compiled(self, inputs):
        """The outputs of the compiled step, or None when the NumPy kernels must run it."""
        buffers = {}
        for var in self._donated + self._read_only:
            cell = self._cells[var]
            device = cell.device
            if device is None:
                host = cell.value
                if host is None:  # uninitialized: the NumPy kernels raise naming the variable
                    return None
                device = DeviceValue(self.jax.device_put(host), stale=False)
                cell.device = device
            buffers[var] = device.array
        try:
            outputs, updated = self._fn(tuple(buffers[v] for v in self._donated),
                                        tuple(buffers[v] for v in self._read_only), inputs)
        except Exception as exc:  # noqa: BLE001 - a trace failure: these shapes run on NumPy
            if any(buffers[v].is_deleted() for v in self._donated):
                raise
            _log.info("%s: not compiled for these inputs (%s: %s); running its NumPy kernels",
                      self.cluster.label, type(exc).__name__, exc)
            self._failed.add(self._signature(inputs))
            return None
        for var, value in zip(self._updated, updated):
            self._cells[var].device = DeviceValue(value, stale=True)
        # The step is done when run() returns, as in TF: dispatch is asynchronous, and a
        # training loop fetching nothing would otherwise queue steps without bound.
        self.jax.block_until_ready(updated)
        return [np.asarray(value) for value in outputs]

    @staticmethod
    def _signature(inputs):
        return tuple((np.shape(v), np.asarray(v).dtype.str) for v in inputs)

    def _run_numpy(self, inputs):
        """The cluster's ops, one NumPy kernel each, in order (their errors name the op)."""
        from tensorweave.runtime import executor  # executor binds this runner: import late
        if self._fallback is None:
            slots = {t: n for n, t in enumerate(self.cluster.inputs)}
            nodes = []
            for op in self.cluster.trace_ops:
                input_slots = []
                for tensor in op.inputs:
                    if tensor not in slots:  # a variable's ref, read from its cell
                        slots[tensor] = len(slots)
                    input_slots.append(slots[tensor])
                output_slots = []
                for tensor in op.outputs:
                    slots.setdefault(tensor, len(slots))
                    output_slots.append(slots[tensor])
                nodes.append(executor.bind_op(op, input_slots, output_slots, self.manager))
            self._fallback = (nodes, len(slots), [slots[t] for t in self.cluster.outputs])
        nodes, size, output_slots = self._fallback
        self.numpy_steps += 1
        values = [None] * size
        values[:len(inputs)] = inputs
        for node in nodes:
            try:
                result = node.compute(*[values[i] for i in node.input_slots], **node.kwargs)
            except Exception as exc:  # noqa: BLE001 - named by the op that raised it
                raise executor.op_error(node, exc) from None
            executor.store_outputs(node, values, result)
        outputs = [values[i] for i in output_slots]
        return outputs[0] if self.single else outputs
