"""`hvd.DistributedOptimizer(optimizer, op=hvd.Adasum)`: Horovod's delta optimizer for TF 1.x
graphs. Adasum combines what each rank's optimizer did, not the raw gradients:

  - on the first step every rank remembers its variables as `start` (after the broadcast of
    rank 0's initial values, so every rank's start is the same);
  - every step, the wrapped optimizer applies this rank's own gradients locally;
  - every backward_passes_per_step-th step, each variable's delta since `start` is combined
    over the ranks with Adasum (adasum.py), `start` advances by the combined delta, and every
    rank's variable is set to the new `start` — identical on every rank again.

So optimizers with state (Adam, momentum) keep per-rank state while the model itself stays in
step. As in Horovod, this needs the global process set (Adasum does not take process sets
here) and does not average aggregated gradients.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.horovod import basics
from tensorweave.horovod.compression import Compression
from tensorweave.horovod.mpi_ops import allreduce
from tensorweave.ops import array_ops, cond_ops, control_flow_ops, math_ops, state_ops
from tensorweave.ops.variables import Variable
from tensorweave.train.optimizer import WrappingOptimizer


class DistributedAdasumOptimizer(WrappingOptimizer):
    """See the module docstring; built by DistributedOptimizer(op=hvd.Adasum)."""

    def __init__(self, optimizer, name=None, use_locking=False,
                 compression=Compression.none, backward_passes_per_step=1):
        if int(backward_passes_per_step) != backward_passes_per_step or \
                backward_passes_per_step < 1:
            raise ValueError("backward_passes_per_step must be a positive integer, got "
                             f"{backward_passes_per_step!r}")
        super().__init__(optimizer, use_locking,
                         name or f"DistributedDelta{type(optimizer).__name__}")
        self._compression = compression
        self._passes = int(backward_passes_per_step)

    def compute_gradients(self, *args, **kwargs):
        """This rank's own gradients: Adasum combines the updates, after they are applied."""
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        pairs = list(grads_and_vars)
        variables = [var for grad, var in pairs if grad is not None]
        graph = graph_lib.get_default_graph()
        with graph.name_scope(f"{self._name}_Adasum"), graph.control_dependencies(None):
            count = Variable(convert_to_tensor(0, dtype=dtypes.int64), trainable=False,
                             name="step_count")
            starts = [Variable(array_ops.zeros(var.shape.as_list(), dtype=var.dtype.base_dtype),
                               trainable=False, name=f"delta_start_{i}")
                      for i, var in enumerate(variables)]
        with graph.name_scope(f"{self._name}_Adasum"):
            remember = cond_ops.cond(
                math_ops.equal(count, 0),
                lambda: control_flow_ops.group(*[state_ops.assign(start, var) for start, var
                                                 in zip(starts, variables)]),
                control_flow_ops.no_op)
            with graph.control_dependencies([remember]):
                applied = self._optimizer.apply_gradients(pairs, global_step, name)
            with graph.control_dependencies([applied]):
                communicate = math_ops.equal(math_ops.mod(count, self._passes),
                                             self._passes - 1)
                synced = cond_ops.cond(communicate, lambda: self._combine(variables, starts),
                                       control_flow_ops.no_op)
            with graph.control_dependencies([synced]):
                return state_ops.assign_add(count, convert_to_tensor(1, dtype=dtypes.int64)).op

    def _combine(self, variables, starts):
        """start += Adasum over the ranks of (var - start); var = start."""
        updates = []
        for index, (var, start) in enumerate(zip(variables, starts)):
            delta = array_ops.identity(var) - start
            combined = allreduce(delta, op=basics.Adasum, compression=self._compression,
                                 name=f"delta_{index}")
            updates.append(state_ops.assign(var, state_ops.assign_add(start, combined)))
        return control_flow_ops.group(*updates)


def build(optimizer, name=None, use_locking=False, device_dense="", device_sparse="",
          compression=Compression.none, sparse_as_dense=False, backward_passes_per_step=1,
          op=basics.Adasum, gradient_predivide_factor=1.0, average_aggregated_gradients=False,
          process_set=None, scale_local_gradients=True):
    """DistributedOptimizer(..., op=hvd.Adasum), with Horovod's restrictions."""
    if average_aggregated_gradients:
        raise ValueError("Adasum does not support average_aggregated_gradients=True")
    if gradient_predivide_factor != 1.0:
        raise ValueError("gradient_predivide_factor needs op=hvd.Average")
    if process_set is not None and process_set.process_set_id != 0:
        raise NotImplementedError("The Adasum DistributedOptimizer does not take process "
                                  "sets (as in Horovod); use hvd.allreduce(op=hvd.Adasum, "
                                  "process_set=...) directly")
    return DistributedAdasumOptimizer(optimizer, name, use_locking, compression,
                                      backward_passes_per_step)
