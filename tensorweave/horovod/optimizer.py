"""Horovod's DistributedOptimizer and BroadcastGlobalVariablesHook for TF 1.x graphs.

DistributedOptimizer wraps any tf.train.Optimizer: compute_gradients computes this rank's
gradients and reduces them over every rank (averaged by default) before apply_gradients
applies them, so every rank takes the same step. Sparse gradients (IndexedSlices, from
embedding lookups) are allgathered unless sparse_as_dense. With backward_passes_per_step N > 1
the gradients of N steps are summed locally and reduced and applied once (aggregation.py).
With process_set= the gradients are averaged over that set's ranks only; variables registered
with register_local_var keep their own rank's gradient (divided by the set's size when
scale_local_gradients, as Horovod does, so local and reduced gradients keep one scale).
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.horovod import adasum_optimizer
from tensorweave.horovod import basics
from tensorweave.horovod import grouped_ops
from tensorweave.horovod.aggregation import LocalAggregation
from tensorweave.horovod.compression import Compression
from tensorweave.horovod.mpi_ops import allreduce, broadcast_global_variables
from tensorweave.horovod.process_sets import global_process_set
from tensorweave.train.optimizer import WrappingOptimizer
from tensorweave.train.session_run_hook import SessionRunHook


class DistributedOptimizer(WrappingOptimizer):
    """An optimizer that averages gradients across ranks before applying them."""

    def __new__(cls, optimizer, *args, **kwargs):
        """op=hvd.Adasum (by keyword) gives Horovod's delta optimizer (adasum_optimizer.py)."""
        if kwargs.get("op") == basics.Adasum:
            return adasum_optimizer.build(optimizer, *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, optimizer, name=None, use_locking=False, device_dense="",
                 device_sparse="", compression=Compression.none, sparse_as_dense=False,
                 backward_passes_per_step=1, op=basics.Average,
                 gradient_predivide_factor=1.0, average_aggregated_gradients=False,
                 num_groups=0, groups=None, process_set=global_process_set,
                 scale_local_gradients=True):
        if gradient_predivide_factor != 1.0 and op != basics.Average:
            raise ValueError("gradient_predivide_factor needs op=hvd.Average")
        self._groups = grouped_ops.check_groups(groups if groups is not None else
                                                (num_groups or None))
        self._process_set = process_set
        self._local_vars = set()
        self._scale_local = scale_local_gradients
        super().__init__(optimizer, use_locking,
                         name or f"Distributed{type(optimizer).__name__}")
        self._compression = compression
        self._sparse_as_dense = sparse_as_dense
        self._op = op
        self._predivide = gradient_predivide_factor
        self._aggregation = None
        if backward_passes_per_step != 1:
            self._aggregation = LocalAggregation(backward_passes_per_step,
                                                 average_aggregated_gradients,
                                                 self._reduce_one, self._name)

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients, reduced over every rank (every
        backward_passes_per_step-th call's accumulated sums, with local aggregation)."""
        grads_and_vars = self._optimizer.compute_gradients(*args, **kwargs)
        if self._aggregation is not None:
            if self._sparse_as_dense:
                grads_and_vars = [(convert_to_tensor(g) if isinstance(g, IndexedSlices) else g,
                                   v) for g, v in grads_and_vars]
            return self._aggregation.compute_gradients(grads_and_vars)
        if self._process_set.size() == 1:
            return grads_and_vars
        reduced, shared = [], []
        with graph_lib.name_scope(f"{self._name}_Allreduce"):
            for grad, var in grads_and_vars:
                if grad is not None and id(var) in self._local_vars:
                    grad = self._scale_local_gradient(grad)
                elif grad is not None:
                    if self._sparse_as_dense and isinstance(grad, IndexedSlices):
                        grad = convert_to_tensor(grad)
                    if self._groups is None:
                        grad = self._reduce(grad)
                    else:
                        shared.append(len(reduced))
                reduced.append((grad, var))
            if shared:  # explicit groups: each reduced together (grouped_ops.py)
                for indices in grouped_ops.partition([reduced[i][1] for i in shared],
                                                     self._groups):
                    members = [shared[i] for i in indices]
                    for index, grad in zip(members, self._reduce_group(
                            [reduced[i][0] for i in members])):
                        reduced[index] = (grad, reduced[index][1])
        return reduced

    def register_local_var(self, var):
        """Marks `var` as this rank's own: its gradient is not reduced (Horovod's local
        variables, e.g. layers each rank keeps for itself)."""
        self._local_vars.add(id(var))

    def _scale_local_gradient(self, grad):
        if not self._scale_local:
            return grad
        size = self._process_set.size()
        if isinstance(grad, IndexedSlices):
            return IndexedSlices(grad.values / size, grad.indices, grad.dense_shape)
        return grad / size

    def _reduce_one(self, grad):
        return grad if self._process_set.size() == 1 else self._reduce(grad)

    def _reduce_group(self, grads):
        if self._predivide == 1.0:
            return grouped_ops.grouped_allreduce(grads, op=self._op,
                                                 compression=self._compression,
                                                 process_set=self._process_set)
        return grouped_ops.grouped_allreduce(
            grads, op=basics.Sum, compression=self._compression,
            prescale_factor=1.0 / self._predivide,
            postscale_factor=self._predivide / self._process_set.size(),
            process_set=self._process_set)

    def _reduce(self, grad):
        if self._predivide == 1.0:
            return allreduce(grad, op=self._op, compression=self._compression,
                             process_set=self._process_set)
        # Horovod: divide by the factor before the sum and by size/factor after it.
        return allreduce(grad, op=basics.Sum, compression=self._compression,
                         prescale_factor=1.0 / self._predivide,
                         postscale_factor=self._predivide / self._process_set.size(),
                         process_set=self._process_set)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        if self._aggregation is None:
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        grads_and_vars = list(grads_and_vars)
        return self._aggregation.apply_gradients(
            lambda: self._optimizer.apply_gradients(grads_and_vars, global_step, name),
            grads_and_vars, global_step)


class BroadcastGlobalVariablesHook(SessionRunHook):
    """Broadcasts every global variable from `root_rank` right after the session is created
    (after initialization or restore), so every rank starts from the same state."""

    def __init__(self, root_rank, device=""):
        self.root_rank = root_rank
        self.device = device
        self.bcast_op = None

    def begin(self):
        graph = graph_lib.get_default_graph()
        if self.bcast_op is None or self.bcast_op.graph is not graph:
            with graph.device(self.device):
                self.bcast_op = broadcast_global_variables(self.root_rank)

    def after_create_session(self, session, coord):
        session.run(self.bcast_op)


