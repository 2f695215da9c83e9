"""MovingAverageOptimizer: trains with the wrapped optimizer and keeps an exponential moving
average of every trained variable; `swapping_saver()` writes each average under its
variable's name (and the variable under the average's), so an evaluation program that
restores with a plain Saver gets the averaged weights without knowing about averaging.

The averages are tf.train.ExponentialMovingAverage shadows (zero_debias=True, which, as in TF,
debiases only averages of tensors, never of variables). With sequential_update the averages
read the variables after this step's update; without it the two may run in either order.
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.contrib.opt._wrapping import WrappingOptimizer
from tensorweave.ops import control_flow_ops
from tensorweave.ops.partitioned_variables import PartitionedVariable
from tensorweave.train.moving_averages import ExponentialMovingAverage
from tensorweave.train.saver import Saver


class MovingAverageOptimizer(WrappingOptimizer):
    def __init__(self, opt, average_decay=0.9999, num_updates=None, sequential_update=True):
        super().__init__(opt, False, "MovingAverageOptimizer")
        if isinstance(average_decay, (int, float)) and not 0.0 <= average_decay <= 1.0:
            raise ValueError(f"MovingAverageOptimizer: average_decay must be in [0, 1], got "
                             f"{average_decay}")
        self._ema = ExponentialMovingAverage(average_decay, num_updates=num_updates,
                                             zero_debias=True)
        self._sequential_update = sequential_update
        self._swapped_variable_name_map = None  # variable name <-> its average's name

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        train_op = self._opt.apply_gradients(grads_and_vars, global_step=global_step,
                                             name=name)
        var_list = [var for grad, var in grads_and_vars if grad is not None]
        graph = graph_lib.get_default_graph()
        with graph.control_dependencies([train_op] if self._sequential_update else []):
            average_op = self._ema.apply(var_list)
        self._swapped_variable_name_map = {}
        for var in var_list:
            average_name = self._ema.average(var).op.name
            self._swapped_variable_name_map[var.op.name] = average_name
            self._swapped_variable_name_map[average_name] = var.op.name
        return control_flow_ops.group(train_op, average_op, name="train_with_avg")

    def swapping_saver(self, var_list=None, name="swapping_saver", **kwargs):
        """A tf.train.Saver of `var_list` (default: the global variables) in which every
        averaged variable and its average trade checkpoint names."""
        if self._swapped_variable_name_map is None:
            raise RuntimeError("MovingAverageOptimizer.swapping_saver: call apply_gradients "
                               "or minimize first (the averages are created there)")
        if var_list is None:
            var_list = graph_lib.get_collection(GraphKeys.GLOBAL_VARIABLES)
        if not isinstance(var_list, dict):
            var_list = {_checkpoint_name(var): var for var in var_list}
        by_name = {}
        for key, value in var_list.items():
            if isinstance(value, (list, tuple, PartitionedVariable)):
                by_name.update((piece.op.name, piece) for piece in value)
            else:
                by_name[key] = value

        def swapped(key, value):
            other = self._swapped_variable_name_map.get(key)
            if other is None:
                return value
            if other not in by_name:
                raise ValueError(f"MovingAverageOptimizer.swapping_saver: var_list holds "
                                 f"{key} but not {other}, which it is swapped with")
            return by_name[other]

        swapped_list = {}
        for key, value in var_list.items():
            if isinstance(value, (list, tuple, PartitionedVariable)):
                swapped_list[key] = [swapped(piece.op.name, piece) for piece in value]
            else:
                swapped_list[key] = swapped(key, value)
        return Saver(swapped_list, name=name, **kwargs)


def _checkpoint_name(var):
    return var.name if isinstance(var, PartitionedVariable) else var.op.name
