"""DropStaleGradientOptimizer: for asynchronous training, drops a worker's gradients when the
global step moved more than `staleness` steps between computing and applying them.

compute_gradients records the global step before the gradients are computed; apply_gradients
compares it with the global step once they are, and applies them (through the wrapped
optimizer) only if global_step - recorded <= staleness. The returned op adds 1.0 to the float
variable "stale_counter" (beside the global step) for each dropped update, 0.0 otherwise, and
its value is what the op outputs; the summary "Gradient staleness percentage" reports the
counter over global_step + 1, as in TF.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.contrib.opt._wrapping import WrappingOptimizer
from tensorweave.ops import array_ops, cond_ops, init_ops, math_ops, state_ops, summary_ops
from tensorweave.ops import variable_scope
from tensorweave.train import training_util


class DropStaleGradientOptimizer(WrappingOptimizer):
    def __init__(self, opt, staleness, use_locking=False, name="DropStaleGradient"):
        super().__init__(opt, use_locking, name)
        if isinstance(staleness, bool) or not isinstance(staleness, int) or staleness < 0:
            raise ValueError(f"{name}: staleness must be a non-negative int (the global steps "
                             f"a gradient may lag behind), got {staleness!r}")
        self._staleness = staleness
        self._local_step = None

    def compute_gradients(self, loss, *args, **kwargs):
        global_step = training_util.get_global_step()
        if global_step is None:
            raise ValueError(f"{self._name}.compute_gradients: the graph has no global step; "
                             f"create one (tf.train.get_or_create_global_step()) first")
        graph = graph_lib.get_default_graph()
        loss = convert_to_tensor(loss)
        with graph.colocate_with(loss.op):
            self._local_step = global_step + 0
        with graph.control_dependencies([self._local_step]):
            loss = array_ops.identity(loss)
        return self._opt.compute_gradients(loss, *args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        if global_step is None:
            raise ValueError(f"{self._name}.apply_gradients: global_step is required "
                             f"(staleness is counted in global steps)")
        if self._local_step is None:
            raise ValueError(f"{self._name}.apply_gradients: call compute_gradients (or "
                             f"minimize) of this optimizer first; it records the step the "
                             f"gradients were computed at")
        graph = graph_lib.get_default_graph()
        with graph.colocate_with(global_step.op):
            stale_counter = variable_scope.get_variable(
                "stale_counter", [], dtype=dtypes.float32,
                initializer=init_ops.zeros_initializer(), trainable=False)

        def accept():
            update = self._opt.apply_gradients(grads_and_vars, global_step=global_step,
                                               name=name)
            with graph_lib.get_default_graph().control_dependencies([update]):
                return array_ops.identity(convert_to_tensor(0.0))

        def drop():
            return convert_to_tensor(1.0)

        gradients = [grad.values if isinstance(grad, IndexedSlices) else grad
                     for grad, _ in grads_and_vars if grad is not None]
        with graph.control_dependencies(gradients), graph.colocate_with(global_step.op):
            staleness = array_ops.reshape(global_step.read_value() - self._local_step, [])
        dropped = cond_ops.cond(math_ops.less_equal(staleness, self._staleness), accept, drop)
        conditional_update = state_ops.assign_add(stale_counter, dropped)
        summary_ops.scalar("Gradient staleness percentage",
                           stale_counter.value() / math_ops.cast(global_step.value() + 1,
                                                                 dtypes.float32))
        return conditional_update
