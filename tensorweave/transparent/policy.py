"""What transparent mode changes in a rank: the DataParallelPolicy (framework/data_parallel.py)
that the optimizers, initializers, savers, summary writers and input pipelines consult.

- Gradients: every Optimizer.apply_gradients first averages its gradients over the ranks with
  Horovod's allreduce (tensorweave/horovod), so every rank applies the same update and the
  parameters stay bitwise equal. Gradients that come out of a collective already (a script
  using hvd.DistributedOptimizer itself) are left alone.
- Initial values: the op that initialises or restores the global variables (an initializer,
  Saver.restore, a Scaffold's init op) is followed by a broadcast of rank 0's values, so
  different random initialisations (or checkpoints) on the ranks cannot diverge.
- Input: each rank reads every `size`-th example from its rank (data/mnist.py, tf.data
  iterators, queue input producers).
- Files: only rank 0 writes checkpoints and summaries.
- The learning rate is left as written (N ranks make the effective batch N times larger); with
  scale_lr it is multiplied by N. Rank 0 says which, once, on stderr.
"""
import sys
import threading

from tensorweave.framework import data_parallel
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.horovod import mpi_ops
from tensorweave.ops import array_ops, control_flow_ops, math_ops, state_ops

# Op types whose outputs are reduced over the ranks already.
_COLLECTIVE_TYPES = frozenset({"CollectiveAllReduce", "CollectiveAllGather"})


def _reduced_already(grad):
    tensor = grad.values if isinstance(grad, IndexedSlices) else grad
    op = getattr(tensor, "op", None)
    # one hop back too: Horovod's Average of sparse values divides the gathered values
    return op is not None and (op.type in _COLLECTIVE_TYPES or any(
        getattr(t, "op", None) is not None and t.op.type in _COLLECTIVE_TYPES
        for t in op.inputs))


class TransparentPolicy(data_parallel.DataParallelPolicy):
    """Rank `rank` of `size` in a transparent data-parallel job."""

    def __init__(self, rank, size, scale_lr=False, notice=None):
        if not 0 <= rank < size:
            raise ValueError(f"TransparentPolicy: rank {rank} is not in [0, {size})")
        self.rank, self.size, self.scale_lr = rank, size, scale_lr
        self._notice = notice if notice is not None else _stderr_line
        self._said_learning_rate = False
        self._lock = threading.Lock()

    def reduce_gradients(self, grads_and_vars):
        self._say_learning_rate_once()
        if self.size == 1:
            return grads_and_vars
        reduced = []
        with graph_lib.name_scope("TransparentAllreduce"):
            for grad, var in grads_and_vars:
                if grad is not None and not _reduced_already(grad):
                    grad = mpi_ops.allreduce(grad)  # the mean over the ranks
                reduced.append((grad, var))
        return reduced

    def learning_rate(self, tensor):
        if not self.scale_lr or self.size == 1:
            return tensor
        return math_ops.multiply(tensor, math_ops.cast(self.size, tensor.dtype),
                                 name="scaled_learning_rate")

    def after_variables_set(self, op, variables):
        if self.size == 1:
            return op
        graph = op.graph
        global_ids = {id(v) for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)}
        shared = [v for v in variables if id(v) in global_ids]
        if not shared:
            return op
        with graph.as_default(), graph.name_scope(None), graph.name_scope(
                f"{op.name}_broadcast"), graph.control_dependencies([op]):
            assigns = []
            for var in shared:
                with graph.colocate_with(var.op):
                    # The identity is made under the control dependency, so the value sent
                    # is the one the initializer or restore just wrote.
                    value = var.read_value()
                    assigns.append(state_ops.assign(var, mpi_ops.broadcast(value, 0)).op)
            return control_flow_ops.group(*assigns, name="all")

    def input_shard(self):
        return self.size, self.rank

    def writes_files(self):
        return self.rank == 0

    def _say_learning_rate_once(self):
        with self._lock:
            if self._said_learning_rate:
                return
            self._said_learning_rate = True
        if self.rank != 0 or self.size == 1:
            return
        if self.scale_lr:
            self._notice(f"tensorweave transparent: {self.size} ranks average their gradients; "
                         f"learning rates are multiplied by {self.size} (--scale-lr) for the "
                         f"{self.size}x larger effective batch")
        else:
            self._notice(f"tensorweave transparent: {self.size} ranks average their gradients, "
                         f"so each step sees {self.size}x the batch; learning rates are left as "
                         f"written (--scale-lr multiplies them by {self.size})")


def _stderr_line(message):
    print(message, file=sys.stderr, flush=True)
