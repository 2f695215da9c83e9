"""`repl.wrap_optimizer(opt)`: an optimizer whose gradients are reduced across the replicas
before the wrapped optimizer applies them, so every replica takes the same step.

The replicator decides both halves: how a gradient is reduced (in-graph: an all_reduce
'mean' between the replicas; allreduce mode: a collective mean over the processes; the
parameter-server modes: none, the ps does it) and how the update is applied (in-graph: once,
by the first replica, on the variables every replica shares, the later replicas' train ops
running that update; allreduce mode: by every process on its own copy; ps_sync: through a
SyncReplicasOptimizer; ps_async: directly).
"""
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.replicator import context as context_lib
from tensorweave.train.optimizer import Optimizer, WrappingOptimizer


class ReplicatedOptimizer(WrappingOptimizer):
    """Wraps `optimizer` for `replicator`; use compute/apply_gradients or minimize inside
    step_fn."""

    def __init__(self, optimizer, replicator):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"repl.wrap_optimizer expects a tf.train.Optimizer, got "
                            f"{type(optimizer).__name__}")
        super().__init__(optimizer, False, f"Replicated{type(optimizer).__name__}")
        self._replicator = replicator

    def compute_gradients(self, *args, **kwargs):
        """This replica's gradients, reduced across the replicas (as the mode needs)."""
        context_lib.current(f"{self._name}.compute_gradients")
        grads_and_vars = self._optimizer.compute_gradients(*args, **kwargs)
        reduced = []
        for grad, var in grads_and_vars:
            if grad is not None:
                if isinstance(grad, IndexedSlices):
                    grad = convert_to_tensor(grad)
                grad = self._replicator._reduce_gradient(grad)
            reduced.append((grad, var))
        return reduced

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        ctx = context_lib.current(f"{self._name}.apply_gradients")
        index = ctx.apply_count
        ctx.apply_count += 1
        return self._replicator._apply_gradients(ctx, index, self._optimizer,
                                                 list(grads_and_vars), global_step, name)
