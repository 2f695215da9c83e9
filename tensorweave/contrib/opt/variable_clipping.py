"""VariableClippingOptimizer: after the wrapped optimizer's update, rescales the chosen
variables so that their L2 norm over the given dimensions is at most `max_norm` (a max-norm
constraint, e.g. on the rows of an embedding with clip dims [1]).

With a sparse gradient only the rows it touched are clipped (each once, however often its
index repeats), unless the clip dimensions include 0, which takes the whole variable.
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.contrib.opt._wrapping import WrappingOptimizer
from tensorweave.ops import array_ops, clip_ops, control_flow_ops, state_ops
from tensorweave.ops.sort_ops import unique
from tensorweave.ops.variables import Variable


class VariableClippingOptimizer(WrappingOptimizer):
    def __init__(self, opt, vars_to_clip_dims, max_norm, use_locking=False,
                 colocate_clip_ops_with_vars=False, name="VariableClipping"):
        super().__init__(opt, use_locking, name)
        if not isinstance(vars_to_clip_dims, dict):
            raise TypeError(f"{name}: vars_to_clip_dims must be a dict {{variable: [dims]}}, "
                            f"got {type(vars_to_clip_dims).__name__}")
        for var, dims in vars_to_clip_dims.items():
            _check_dims(name, var, dims)
        if isinstance(max_norm, (int, float)) and max_norm <= 0:
            raise ValueError(f"{name}: max_norm must be positive, got {max_norm}")
        self._vars_to_clip_dims = {var: list(dims) for var, dims in vars_to_clip_dims.items()}
        self._max_norm = max_norm
        self._colocate_clip_ops_with_vars = colocate_clip_ops_with_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        graph = graph_lib.get_default_graph()
        with graph.name_scope(name or self._name) as scope:
            update_op = self._opt.apply_gradients(grads_and_vars, global_step=global_step)
            clip_ops_list = []
            with graph.control_dependencies([update_op]):
                for grad, var in grads_and_vars:
                    if grad is None or var not in self._vars_to_clip_dims:
                        continue
                    with graph.name_scope("clip_" + var.op.name):
                        if isinstance(grad, IndexedSlices) and \
                                0 not in self._vars_to_clip_dims[var]:
                            clip_ops_list.append(self._clip_rows(grad.indices, var))
                        else:
                            clip_ops_list.append(self._clip_dense(var))
            return control_flow_ops.group(update_op, *clip_ops_list, name=scope.rstrip("/"))

    def _clip_place(self, var):
        graph = graph_lib.get_default_graph()
        return graph.colocate_with(var.op if self._colocate_clip_ops_with_vars else None)

    def _clip_dense(self, var):
        graph = graph_lib.get_default_graph()
        with self._clip_place(var):
            updated = var.read_value()
            clipped = clip_ops.clip_by_norm(updated, self._max_norm, self._vars_to_clip_dims[var])
            delta = updated - clipped
        with graph.colocate_with(var.op):
            return state_ops.assign_sub(var, delta, use_locking=self._use_locking).op

    def _clip_rows(self, indices, var):
        graph = graph_lib.get_default_graph()
        with graph.colocate_with(var.op):
            rows = unique(indices).y
            subset = array_ops.gather(var.read_value(), rows)
        with self._clip_place(var):
            clipped = clip_ops.clip_by_norm(subset, self._max_norm, self._vars_to_clip_dims[var])
            delta = subset - clipped
        with graph.colocate_with(var.op):
            return state_ops.scatter_sub(var, rows, delta, use_locking=self._use_locking).op


def _check_dims(name, var, dims):
    if not isinstance(var, Variable):
        raise TypeError(f"{name}: the keys of vars_to_clip_dims must be tf.Variables, got "
                        f"{type(var).__name__}")
    rank = var.shape.ndims
    if not isinstance(dims, (list, tuple)) or not dims or \
            not all(isinstance(dim, int) and 0 <= dim < (rank or 0) for dim in dims):
        raise ValueError(f"{name}: vars_to_clip_dims[{var.op.name}] must be a non-empty list "
                         f"of dimensions of the variable (0..{(rank or 0) - 1}), got {dims!r}")
