"""`tf.train.Optimizer`: compute gradients, create slots, apply updates next to each variable.

Subclasses say how to update one variable: `_create_slots`, `_prepare` (hyper-parameters as
tensors, built once per apply), and `_apply_dense` (one Apply* op). Updates and slots are
colocated with their variable, so they run where the variable lives.
"""
from tensorweave.framework import data_parallel
from tensorweave.framework import distribution_context
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.function_graph import outermost_graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import array_ops, control_flow_ops, gradients as gradients_lib, math_ops
from tensorweave.ops import state_ops
from tensorweave.ops.sort_ops import unique
from tensorweave.ops.variables import Variable


class Optimizer:
    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {variable: slot variable}
        self._non_slot = {}  # (name, graph) -> variable
        self._hyper_cache = {}

    def get_name(self):
        return self._name

    # --- the public API -----------------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        usable = [v for g, v in grads_and_vars if g is not None]
        if not usable:
            raise ValueError(f"No gradients provided for any variable, check your graph for ops "
                             f"that do not support gradients, between variables "
                             f"{[v.name for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        if callable(loss):
            raise NotImplementedError("Optimizer.compute_gradients(callable) is eager-mode only")
        loss = _scale_loss_for_replicas(convert_to_tensor(loss))
        if var_list is None:
            var_list = (graph_lib.get_collection(GraphKeys.TRAINABLE_VARIABLES) +
                        graph_lib.get_collection(GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
        else:
            var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for var in var_list:
            if not isinstance(var, Variable):
                raise TypeError(f"Argument is not a tf.Variable: {var}")
            if not var.dtype.is_floating:
                raise ValueError(f"Invalid type {var.dtype.name} for {var.name}, expected "
                                 "a floating-point type")
        grads = gradients_lib.gradients(
            loss, var_list, grad_ys=grad_loss,
            colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = control_flow_ops.tuple(grads)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = [(g, v) for g, v in grads_and_vars]
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        replica = distribution_context.syncing_replica_context()
        if replica is not None:  # tf.distribute: sum over the replicas, apply once
            grads_and_vars = [(convert_to_tensor(g) if isinstance(g, IndexedSlices) else g, v)
                              for g, v in grads_and_vars]
            return replica.merge_call(_distributed_apply,
                                      args=(self, grads_and_vars, global_step, name))
        # Transparent mode averages the gradients over the ranks here (framework/data_parallel).
        grads_and_vars = list(data_parallel.policy().reduce_gradients(grads_and_vars))
        for grad, var in grads_and_vars:
            if grad is not None and not isinstance(grad, IndexedSlices):
                grad = convert_to_tensor(grad)
                if grad.dtype != var.dtype:
                    raise ValueError(f"Gradient of {var.name} has dtype {grad.dtype.name}, the "
                                     f"variable has {var.dtype.name}")
        var_list = [v for g, v in grads_and_vars if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[v.name for _, v in grads_and_vars]}.")
        graph = graph_lib.get_default_graph()
        with graph.control_dependencies(None):
            self._create_slots(var_list)
        update_ops = []
        self._hyper_cache = {}
        with graph.name_scope(name or self._name) as scope:
            self._prepare()
            for grad, var in grads_and_vars:
                if grad is None:
                    continue
                with graph.name_scope("update_" + var.op.name), graph.colocate_with(var.op):
                    if isinstance(grad, IndexedSlices):
                        update_ops.append(self._apply_sparse(grad, var))
                    else:
                        update_ops.append(self._apply_dense(convert_to_tensor(grad), var))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope.rstrip("/"))
            else:
                with graph.control_dependencies([self._finish(update_ops, "update")]):
                    with graph.colocate_with(_var_op(global_step)):
                        apply_updates = state_ops.assign_add(
                            global_step, convert_to_tensor(1, dtype=global_step.dtype),
                            name=scope.rstrip("/")).op
        train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
        if apply_updates not in train_ops:
            train_ops.append(apply_updates)
        return apply_updates

    # --- slots ----------------------------------------------------------------------------------
    def get_slot_names(self):
        return sorted(self._slots)

    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(var)

    def variables(self):
        slots = [s for table in self._slots.values() for s in table.values()]
        return slots + list(self._non_slot.values())

    def _slot_variable(self, var, initial_value, slot_name):
        table = self._slots.setdefault(slot_name, {})
        if var not in table:
            graph = graph_lib.get_default_graph()
            with graph.name_scope(None), graph.colocate_with(var.op):
                base = f"{var.op.name}/{self._name}" + ("" if not slot_name else f"_{slot_name}")
                table[var] = Variable(initial_value, trainable=False,
                                      name=_absolute(graph.unique_name(base, mark_as_used=False)),
                                      dtype=var.dtype)
        return table[var]

    def _zeros_slot(self, var, slot_name, op_name=None):
        shape = var.shape.as_list()
        return self._slot_variable(var, lambda: array_ops.zeros(shape, dtype=var.dtype),
                                   slot_name)

    def _ones_slot(self, var, slot_name):
        shape = var.shape.as_list()
        return self._slot_variable(var, lambda: array_ops.ones(shape, dtype=var.dtype),
                                   slot_name)

    def _constant_slot(self, var, value, slot_name):
        shape = var.shape.as_list()
        return self._slot_variable(
            var, lambda: array_ops.fill(shape, convert_to_tensor(value, dtype=var.dtype)),
            slot_name)

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        graph = graph_lib.get_default_graph()
        key = (name, graph)
        if key not in self._non_slot:
            with graph.colocate_with(colocate_with.op):
                self._non_slot[key] = Variable(initial_value, trainable=False, name=name,
                                               dtype=colocate_with.dtype)
        return self._non_slot[key]

    def _get_non_slot_variable(self, name, graph=None):
        # The graph that holds the variables, also while a cond or loop body is traced (an
        # update guarded by tf.cond, as tf.contrib.opt.MultitaskOptimizerWrapper makes).
        graph = outermost_graph(graph or graph_lib.get_default_graph())
        return self._non_slot.get((name, graph))

    # --- subclass hooks -------------------------------------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError

    def _apply_sparse(self, grad, var):
        """Default: densify the IndexedSlices and apply them densely (same result as TF for
        optimizers whose dense update of a zero gradient row is the identity)."""
        return self._apply_dense(convert_to_tensor(grad), var)

    def _finish(self, update_ops, name):
        return control_flow_ops.group(*update_ops, name=name)

    def _hyper(self, value, var, name):
        """A hyper-parameter as a tensor of var's dtype, built once per dtype per apply."""
        key = (name, var.dtype)
        cached = self._hyper_cache.get(key)
        if cached is not None:
            return cached
        if callable(value):
            value = value()
        if isinstance(value, Variable):
            value = value.value()
        if isinstance(value, graph_lib.Tensor):
            tensor = value if value.dtype == var.dtype else math_ops.cast(value, var.dtype)
        else:
            with graph_lib.get_default_graph().colocate_with(None):
                tensor = convert_to_tensor(value, dtype=var.dtype, name=name)
        if name == "learning_rate":
            tensor = data_parallel.policy().learning_rate(tensor)
        self._hyper_cache[key] = tensor
        return tensor



def _scale_loss_for_replicas(loss):
    """Inside a tf.distribute replica context of N replicas, a MEAN-reduced loss divided by
    N: the replicas' gradients are then summed, giving the gradient of the global batch."""
    replica = distribution_context.syncing_replica_context()
    if replica is None or distribution_context.loss_reduction_is_sum(loss.graph):
        return loss
    return loss * convert_to_tensor(1.0 / replica.num_replicas_in_sync, dtype=loss.dtype)


def _distributed_apply(strategy, optimizer, grads_and_vars, global_step, name):
    """merge_call's function (cross-replica context): every gradient summed over the
    replicas (the strategy's cross-device ops), then applied once."""
    present = [(g, v) for g, v in grads_and_vars if g is not None]
    reduced = strategy.extended.batch_reduce_to("SUM", present)
    summed = dict(zip([id(v) for _, v in present], reduced))
    return optimizer.apply_gradients(
        [(summed.get(id(v)) if g is not None else None, v) for g, v in grads_and_vars],
        global_step=global_step, name=name)


class WrappingOptimizer(Optimizer):
    """Base of an optimizer that wraps another one and changes how gradients travel
    (Horovod's DistributedOptimizer, the replicator's): slots and variables are the wrapped
    optimizer's."""

    def __init__(self, optimizer, use_locking, name):
        super().__init__(use_locking, name)
        self._optimizer = optimizer

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self, *args, **kwargs):
        return self._optimizer.variables(*args, **kwargs)

def _absolute(name):
    return name + "/"  # a trailing slash names the op exactly (no enclosing scope)


def _var_op(variable):
    return variable.op




def deduplicate_indexed_slices(grad):
    """(values, indices) of `grad` with each index once, the rows of a repeated index summed:
    what TF's optimizers hand their sparse update (a sparse update is not linear in its
    gradient, so two rows of one index must not be applied one after the other)."""
    distinct = unique(grad.indices)
    summed = math_ops.unsorted_segment_sum(grad.values, distinct.idx,
                                           array_ops.shape(distinct.y)[0])
    return summed, distinct.y
