"""Decoupled weight decay (Loshchilov & Hutter, "Decoupled Weight Decay Regularization"):
before each variable's own update, var -= weight_decay * var, instead of adding an L2 term
to the loss (which adaptive optimizers such as Adam would rescale per coordinate).

As in TF 1.15, `weight_decay` is not multiplied by the learning rate: a schedule that decays
the learning rate should decay `weight_decay` with it (pass a tensor or a callable).
`decay_var_list` (of `minimize` / `apply_gradients`) limits the decay to those variables;
None decays every variable that gets a gradient.
"""
import inspect

from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, control_flow_ops, state_ops
from tensorweave.ops.sort_ops import unique
from tensorweave.train.adam import AdamOptimizer
from tensorweave.train.momentum import MomentumOptimizer
from tensorweave.train.optimizer import Optimizer


class DecoupledWeightDecayExtension:
    """Mixin placed before an Optimizer class in the bases; its first constructor argument
    is `weight_decay`, the rest go to the optimizer."""

    def __init__(self, weight_decay, **kwargs):
        self._weight_decay = weight_decay
        self._decay_var_list = None  # None: decay every updated variable
        self._decay_list_from_minimize = False
        super().__init__(**kwargs)

    def minimize(self, loss, global_step=None, var_list=None,
                 gate_gradients=Optimizer.GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None,
                 decay_var_list=None):
        self._decay_var_list = _variable_set(decay_var_list)
        # Optimizer.minimize calls apply_gradients without decay_var_list: keep this one.
        self._decay_list_from_minimize = True
        try:
            return super().minimize(
                loss, global_step=global_step, var_list=var_list,
                gate_gradients=gate_gradients, aggregation_method=aggregation_method,
                colocate_gradients_with_ops=colocate_gradients_with_ops, name=name,
                grad_loss=grad_loss)
        finally:
            self._decay_list_from_minimize = False

    def apply_gradients(self, grads_and_vars, global_step=None, name=None,
                        decay_var_list=None):
        if not self._decay_list_from_minimize:
            self._decay_var_list = _variable_set(decay_var_list)
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _decays(self, var):
        return self._decay_var_list is None or var in self._decay_var_list

    def _decay_weights_op(self, var):
        if not self._decays(var):
            return control_flow_ops.no_op()
        decay = self._hyper(self._weight_decay, var, "weight_decay")
        return state_ops.assign_sub(var, decay * var.value(), use_locking=self._use_locking).op

    def _decay_weights_sparse_op(self, var, indices):
        """Decays only the rows a sparse gradient touches, each once however often its index
        repeats."""
        if not self._decays(var):
            return control_flow_ops.no_op()
        decay = self._hyper(self._weight_decay, var, "weight_decay")
        rows = unique(indices).y
        return state_ops.scatter_sub(var, rows, decay * array_ops.gather(var.value(), rows),
                                     use_locking=self._use_locking).op

    def _apply_dense(self, grad, var):
        graph = graph_lib.get_default_graph()
        with graph.control_dependencies([self._decay_weights_op(var)]):
            return super()._apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        graph = graph_lib.get_default_graph()
        with graph.control_dependencies([self._decay_weights_sparse_op(var, grad.indices)]):
            base_sparse = super()._apply_sparse
            if getattr(base_sparse, "__func__", None) is Optimizer._apply_sparse:
                # The base densifies sparse gradients through _apply_dense: call its own, not
                # ours, so that the rows the gradient misses are not decayed after all.
                return super()._apply_dense(convert_to_tensor(grad), var)
            return base_sparse(grad, var)


def _variable_set(decay_var_list):
    if decay_var_list is None:
        return None
    if not hasattr(decay_var_list, "__iter__"):
        raise TypeError(f"decay_var_list must be a list of tf.Variables or None, got "
                        f"{type(decay_var_list).__name__}")
    return set(decay_var_list)


def extend_with_decoupled_weight_decay(base_optimizer):
    """A subclass of `base_optimizer` (an Optimizer class) whose constructor takes
    `weight_decay` first and then the base's arguments, and that decays the weights before
    each update: `extend_with_decoupled_weight_decay(tf.train.MomentumOptimizer)(
    weight_decay=1e-4, learning_rate=0.1, momentum=0.9)`."""
    if not (isinstance(base_optimizer, type) and issubclass(base_optimizer, Optimizer)):
        raise TypeError(f"extend_with_decoupled_weight_decay: base_optimizer must be an "
                        f"Optimizer subclass (e.g. tf.train.AdamOptimizer), got "
                        f"{base_optimizer!r}")

    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecayExtension, base_optimizer):
        def __init__(self, weight_decay, *args, **kwargs):
            super().__init__(weight_decay, **_keywords(base_optimizer, args, kwargs))

    OptimizerWithDecoupledWeightDecay.__name__ = f"{base_optimizer.__name__}WithWeightDecay"
    return OptimizerWithDecoupledWeightDecay


def _keywords(base_optimizer, args, kwargs):
    """Positional constructor arguments of `base_optimizer` as keywords (the mixin passes
    only keywords down the bases)."""
    names = [name for name in inspect.signature(base_optimizer.__init__).parameters
             if name != "self"]
    if len(args) > len(names):
        raise TypeError(f"{base_optimizer.__name__} takes {len(names)} arguments after "
                        f"weight_decay, got {len(args)}")
    return {**dict(zip(names, args)), **kwargs}


class MomentumWOptimizer(DecoupledWeightDecayExtension, MomentumOptimizer):
    """Momentum with decoupled weight decay: var -= weight_decay * var, then the momentum
    update."""

    def __init__(self, weight_decay, learning_rate, momentum, use_locking=False,
                 name="MomentumW", use_nesterov=False):
        super().__init__(weight_decay, learning_rate=learning_rate, momentum=momentum,
                         use_locking=use_locking, name=name, use_nesterov=use_nesterov)


class AdamWOptimizer(DecoupledWeightDecayExtension, AdamOptimizer):
    """Adam with decoupled weight decay (AdamW): var -= weight_decay * var, then Adam."""

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, use_locking=False, name="AdamW"):
        super().__init__(weight_decay, learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)
