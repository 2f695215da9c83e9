"""`tf.keras.optimizers`: SGD (momentum, Nesterov), Adam, RMSprop, Adagrad, Adadelta, Adamax,
with Keras's arguments (`lr` or `learning_rate`, `decay`, `clipnorm`, `clipvalue`). The first
four apply their update with the tf.train optimizer of the same rule; Adadelta and Adamax,
which tf.train lacks here, with graph ops on their own accumulators.

The learning rate is a variable (`optimizer.lr`, made on first use in the current graph), so
`K.set_value(model.optimizer.lr, ...)` and the LearningRateScheduler callback change it between
steps; with `decay` the rate used at step t is lr / (1 + decay * t), t = `optimizer.iterations`.

Differences from TF 1.15's Keras optimizers (which are its optimizer_v2 classes): SGD with
momentum keeps TF 1.x's accumulator form (accum = m * accum + g; w -= lr * accum), equal to
Keras's (v = m * v - lr * g; w += v) while lr is constant; Adagrad has no epsilon term.
RMSprop starts its mean square at 0, as Keras does (tf.train.RMSPropOptimizer starts it at 1)."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import clip_ops, control_flow_ops, gradients as gradients_lib, math_ops
from tensorweave.ops import state_ops
from tensorweave.ops import variables as variables_lib
from tensorweave.train import adagrad, adam, gradient_descent, momentum, rmsprop
from tensorweave.train.optimizer import Optimizer as TFOptimizerBase


class _KerasRMSProp(rmsprop.RMSPropOptimizer):
    """tf.train's RMSProp rule with Keras's zero start of the mean square."""

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "rms")
            if self._centered:
                self._zeros_slot(var, "mg")
            self._zeros_slot(var, "momentum")


class Optimizer:
    """Base of the Keras optimizers: `get_updates(loss, params)` returns the update ops."""

    def __init__(self, name, learning_rate, decay=0.0, clipnorm=None, clipvalue=None,
                 **kwargs):
        if "lr" in kwargs:
            learning_rate = kwargs.pop("lr")
        unknown = set(kwargs) - {"epsilon"}
        if unknown:
            raise TypeError(f"{name}: unexpected keyword arguments {sorted(unknown)}")
        if learning_rate < 0:
            raise ValueError(f"{name}: learning rate must be >= 0, got {learning_rate}")
        self._name = name
        self._initial_lr = float(learning_rate)
        self.initial_decay = float(decay)
        self.clipnorm, self.clipvalue = clipnorm, clipvalue
        self._variables = {}  # (graph, name) -> variable
        self.updates, self.weights = [], []

    def _variable(self, name, value, dtype):
        # The graph the optimizer trains in (once get_updates ran), else the default one.
        graph = getattr(self, "_graph", None) or graph_lib.get_default_graph()
        key = (graph, name)
        if key not in self._variables:
            with graph.as_default(), graph.name_scope(None), graph.name_scope(self._name):
                self._variables[key] = variables_lib.Variable(
                    convert_to_tensor(value, dtype=dtype), trainable=False, name=name)
        return self._variables[key]

    @property
    def lr(self):
        return self._variable("lr", self._initial_lr, dtypes.float32)

    learning_rate = lr

    @property
    def iterations(self):
        return self._variable("iterations", 0, dtypes.int64)

    @property
    def decay(self):
        return self._variable("decay", self.initial_decay, dtypes.float32)

    def _current_lr(self):
        if not self.initial_decay:
            return self.lr.value()
        steps = math_ops.cast(self.iterations.value(), dtypes.float32)
        return self.lr.value() / (1.0 + self.decay.value() * steps)

    def _make(self, learning_rate):
        raise NotImplementedError

    def get_gradients(self, loss, params):
        grads = gradients_lib.gradients(loss, params)
        missing = [p.name for p, g in zip(params, grads) if g is None]
        if missing:
            raise ValueError(f"An operation has `None` for gradient of {missing}: check that "
                             "the loss depends on these weights and that every op between "
                             "them is differentiable.")
        if self.clipnorm is not None:
            grads = [clip_ops.clip_by_norm(g, self.clipnorm) for g in grads]
        if self.clipvalue is not None:
            grads = [clip_ops.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def get_updates(self, loss, params):
        self._graph = loss.graph
        grads = self.get_gradients(loss, params)
        optimizer = self._make(self._current_lr())
        update = optimizer.apply_gradients(list(zip(grads, params)),
                                           global_step=self.iterations)
        self._made = optimizer
        self.updates = [_constrained(update, params)]
        return self.updates

    def state_variables(self):
        """The variables the optimizer keeps between steps (the step count, then its
        accumulators in the order they were made): what an HDF5 model file stores so that
        training resumes where it stopped. Empty before the first training step is built."""
        made = getattr(self, "_made", None)
        if made is None and not self.weights:
            return []
        return [self.iterations] + list(self.weights) + (list(made.variables()) if made else [])

    def get_config(self):
        return {"learning_rate": self._initial_lr, "decay": self.initial_decay}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        if momentum < 0:
            raise ValueError(f"SGD: momentum must be >= 0, got {momentum}")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)

    def _make(self, learning_rate):
        if self.momentum == 0 and not self.nesterov:
            return gradient_descent.GradientDescentOptimizer(learning_rate)
        return momentum.MomentumOptimizer(learning_rate, self.momentum,
                                          use_nesterov=self.nesterov)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="Adam", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        if amsgrad:
            raise ValueError("Adam(amsgrad=True) is not supported")
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon or 1e-7

    def _make(self, learning_rate):
        return adam.AdamOptimizer(learning_rate, self.beta_1, self.beta_2, self.epsilon)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon}


class RMSprop(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name="RMSprop", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon = rho, momentum, epsilon or 1e-7
        self.centered = centered

    def _make(self, learning_rate):
        return _KerasRMSProp(learning_rate, self.rho, self.momentum, self.epsilon,
                             centered=self.centered)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum,
                "epsilon": self.epsilon, "centered": self.centered}


class Adagrad(Optimizer):
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 name="Adagrad", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value

    def _make(self, learning_rate):
        return adagrad.AdagradOptimizer(learning_rate, self.initial_accumulator_value)

    def get_config(self):
        return {**super().get_config(),
                "initial_accumulator_value": self.initial_accumulator_value}


class _SlotOptimizer(Optimizer):
    """An optimizer whose rule is written with graph ops on its own accumulator variables
    (one set per weight, zeros to start), for the rules tf.train has no optimizer for."""

    _SLOTS = ()

    def get_updates(self, loss, params):
        self._graph = loss.graph
        grads = self.get_gradients(loss, params)
        lr = self._current_lr()
        with graph_lib.get_default_graph().name_scope(self._name):
            step = math_ops.cast(self.iterations.value() + 1, dtypes.float32)
            updates = []
            for param, grad in zip(params, grads):
                slots = [variables_lib.Variable(
                    np.zeros(param.shape.as_list(), param.dtype.base_dtype.as_numpy_dtype),
                    trainable=False, name=f"{param.op.name.replace('/', '_')}_{slot}")
                    for slot in self._SLOTS]
                self.weights.extend(slots)
                updates.extend(self._rule(param, grad, slots, math_ops.cast(lr, param.dtype),
                                          math_ops.cast(step, param.dtype)))
            with graph_lib.control_dependencies(updates):
                count = state_ops.assign_add(self.iterations, np.int64(1))
        self.updates = [_constrained(control_flow_ops.group(count, *updates), params)]
        return self.updates

    def _rule(self, param, grad, slots, lr, step):
        raise NotImplementedError


class Adadelta(_SlotOptimizer):
    """Adadelta: accumulated squared gradients and updates, decayed by rho; the step is
    sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) * g, scaled by the learning rate."""

    _SLOTS = ("accumulated_grad", "accumulated_delta")

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="Adadelta",
                 **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.rho, self.epsilon = rho, epsilon or 1e-7

    def _rule(self, param, grad, slots, lr, step):
        accumulated_grad, accumulated_delta = slots
        rho = convert_to_tensor(self.rho, dtype=param.dtype)
        eps = convert_to_tensor(self.epsilon, dtype=param.dtype)
        new_grad = rho * accumulated_grad.value() + (1 - rho) * math_ops.square(grad)
        delta = math_ops.sqrt(accumulated_delta.value() + eps) / math_ops.sqrt(new_grad + eps) \
            * grad
        new_delta = rho * accumulated_delta.value() + (1 - rho) * math_ops.square(delta)
        return [state_ops.assign(accumulated_grad, new_grad),
                state_ops.assign(accumulated_delta, new_delta),
                state_ops.assign_sub(param, lr * delta)]

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}


class Adamax(_SlotOptimizer):
    """Adamax: m = b1 m + (1 - b1) g, u = max(b2 u, |g|), w -= lr / (1 - b1^t) m / (u + eps)."""

    _SLOTS = ("m", "u")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="Adamax", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon or 1e-7

    def _rule(self, param, grad, slots, lr, step):
        m, u = slots
        beta_1 = convert_to_tensor(self.beta_1, dtype=param.dtype)
        beta_2 = convert_to_tensor(self.beta_2, dtype=param.dtype)
        new_m = beta_1 * m.value() + (1 - beta_1) * grad
        new_u = math_ops.maximum(beta_2 * u.value(), math_ops.abs(grad))
        rate = lr / (1 - math_ops.pow(beta_1, step))
        eps = convert_to_tensor(self.epsilon, dtype=param.dtype)
        return [state_ops.assign(m, new_m), state_ops.assign(u, new_u),
                state_ops.assign_sub(param, rate * new_m / (new_u + eps))]

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon}


class TFOptimizer(Optimizer):
    """Wraps a tf.train optimizer so that compile() can use it."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self._variables = {}
        self.updates, self.weights = [], []
        self._name, self.clipnorm, self.clipvalue, self.initial_decay = "TFOptimizer", None, \
            None, 0.0

    def get_updates(self, loss, params):
        self._graph = loss.graph
        update = self.optimizer.apply_gradients(
            list(zip(self.get_gradients(loss, params), params)), global_step=self.iterations)
        self._made = self.optimizer
        self.updates = [_constrained(update, params)]
        return self.updates


def _constrained(update, params):
    """`update`, then each constrained variable projected by its constraint (as Keras applies
    kernel_constraint & co. after every step)."""
    constrained = [p for p in params if getattr(p, "constraint", None) is not None]
    if not constrained:
        return update
    with graph_lib.control_dependencies([update]):
        projections = [state_ops.assign(p, p.constraint(p.value())) for p in constrained]
    return control_flow_ops.group(*projections)


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adadelta": Adadelta, "adamax": Adamax}


def get(identifier):
    """An optimizer from a name ('sgd', 'adam', 'rmsprop', 'adagrad', with Keras's defaults),
    a Keras optimizer, or a tf.train optimizer (wrapped in TFOptimizer)."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, TFOptimizerBase):
        return TFOptimizer(identifier)
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r} (use one of "
                     f"{sorted(_BY_NAME)}, a tf.keras.optimizers or a tf.train optimizer)")
