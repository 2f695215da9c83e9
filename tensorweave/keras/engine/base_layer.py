"""`tf.keras.layers.Layer`: a tf.layers Layer that owns its variables (Keras style: made with
tf.Variable under the layer's name scope, no variable-scope reuse), is named at construction
(dense, dense_1, ... per graph), records each call as a Node (for the functional API), and has
Keras's weight accessors (`get_weights` / `set_weights` through the Keras session) and
`get_config` / `from_config`.

The Keras layers in tensorweave.keras.layers subclass both this class and the tf.layers class
that computes the same thing, translating Keras's arguments (names of activations and
initializers, regularizer objects) to it."""
import inspect

import numpy as np

from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.keras import backend, initializers, regularizers
from tensorweave.keras.engine import masking
from tensorweave.keras.engine import node as node_lib
from tensorweave.layers import base
from tensorweave.ops import array_ops, math_ops, variable_scope

# Arguments every Keras layer accepts besides its own.
KERAS_KWARGS = ("input_shape", "batch_input_shape", "batch_size", "weights", "input_dim",
                "input_length")


class Layer(base.Layer):
    _SUPPORTS_MASKING = False  # whether the layer passes its input's mask on unchanged

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        keras_kwargs = pop_keras_kwargs(kwargs)
        base.Layer.__init__(self, trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._init_keras(name, keras_kwargs)

    def _init_keras(self, name, keras_kwargs):
        """The Keras state of a layer; every Keras layer's __init__ calls it."""
        self._keras_style = True
        self._name = name or backend.unique_name(base._snake_case(type(self).__name__))
        self._inbound_nodes = []
        self._weight_losses = []  # regularisation of the weights, made once by build
        self._initial_weights = keras_kwargs.get("weights")
        self.supports_masking = type(self)._SUPPORTS_MASKING
        shape = keras_kwargs.get("batch_input_shape")
        if "input_dim" in keras_kwargs and "input_shape" not in keras_kwargs:
            keras_kwargs["input_shape"] = (keras_kwargs["input_dim"],)
        if shape is None and keras_kwargs.get("input_shape") is not None:
            shape = (keras_kwargs.get("batch_size"),) + tuple(keras_kwargs["input_shape"])
        self._batch_input_shape = None if shape is None else tuple(shape)

    # --- calling ------------------------------------------------------------------------------
    def __call__(self, inputs, *args, **kwargs):
        graph = graph_lib.get_default_graph()
        arguments = dict(kwargs)
        with graph.name_scope(self.name) as scope:
            if self._scope_name is None:  # the first call: variables go under this scope
                self._scope_name = scope
                self._scope = variable_scope.get_variable_scope()
            updates_before, losses_before = len(self._updates), len(self._losses)
            masks = masking.input_masks(inputs)
            if masks is not None and "mask" not in kwargs and self._call_takes("mask"):
                kwargs["mask"] = masks
            self._in_call = True
            try:
                outputs = self._build_and_call(inputs, *args, **kwargs)
                masking.set_masks(outputs, self.compute_mask(inputs, masks))
            finally:
                self._in_call = False
        weight_losses = set(self._weight_losses)
        node_lib.record(self, inputs, outputs, arguments, self._updates[updates_before:],
                        [loss for loss in self._losses[losses_before:]
                         if loss not in weight_losses])
        return outputs

    def _build_and_call(self, inputs, *args, **kwargs):
        if isinstance(inputs, (list, tuple)):
            inputs = [convert_to_tensor(x) for x in inputs]
            shapes = [x.shape for x in inputs]
        else:
            inputs = convert_to_tensor(inputs)
            shapes = inputs.shape
            if self._dtype is None and inputs.dtype.is_floating:
                self._dtype = inputs.dtype
        self._check_input_spec(inputs)
        if not self.built:
            before = len(self._losses)
            self.build(shapes)
            self.built = True
            self._weight_losses.extend(self._losses[before:])
            if self._initial_weights is not None:
                self.set_weights(self._initial_weights)
                self._initial_weights = None
        outputs = self.call(inputs, *args, **kwargs)
        if self.activity_regularizer is not None:
            # As TF 1.x Keras: the activity penalty is averaged over the batch.
            with graph_lib.get_default_graph().name_scope("ActivityRegularizer"):
                total = self.activity_regularizer(outputs)
                batch = math_ops.cast(array_ops.shape(outputs)[0], total.dtype)
                loss = total / batch
            self._losses.append(loss)
            graph_lib.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return outputs

    def _expects_training_arg(self):
        return self._call_takes("training")

    def _call_takes(self, argument):
        return argument in inspect.signature(self.call).parameters

    def compute_mask(self, inputs, mask=None):
        """The mask of this call's outputs: the input's for a layer that supports masking,
        else none (the mask stops here)."""
        return mask if self.supports_masking else None

    # --- weights ------------------------------------------------------------------------------
    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None,
                   trainable=True, constraint=None, **kwargs):
        if name is None:
            raise ValueError(f"{type(self).__name__}.add_weight: a name is required")
        return base.Layer.add_weight(
            self, name, tuple(shape or ()), dtype=dtype or self._dtype or backend.floatx(),
            initializer=initializers.get(initializer), regularizer=regularizers.get(regularizer),
            trainable=trainable, constraint=constraint)

    @property
    def weight_regularization_losses(self):
        """The losses that do not depend on inputs: weight regularisation, and add_loss
        calls made outside the layer's call."""
        return list(self._weight_losses)

    def add_loss(self, losses, inputs=None):
        """Adds loss tensors (or zero-argument functions returning them) to this layer's
        losses, which Model training adds to its total loss. Inside `call` they belong to
        that call; outside it, to the layer unconditionally."""
        for loss in losses if isinstance(losses, (list, tuple)) else [losses]:
            loss = convert_to_tensor(loss() if callable(loss) else loss)
            self._losses.append(loss)
            if not getattr(self, "_in_call", False):
                self._weight_losses.append(loss)

    def get_weights(self):
        return backend.batch_get_value(self.weights)

    def set_weights(self, weights):
        params = self.weights
        if len(weights) != len(params):
            raise ValueError(f"You called `set_weights(weights)` on layer {self.name!r} with a "
                             f"weight list of length {len(weights)}, but the layer was "
                             f"expecting {len(params)} weights.")
        pairs = []
        for variable, value in zip(params, weights):
            value = np.asarray(value)
            if tuple(value.shape) != tuple(variable.shape.as_list()):
                raise ValueError(f"Layer weight shape {tuple(variable.shape.as_list())} not "
                                 f"compatible with provided weight shape {value.shape} "
                                 f"({variable.name})")
            pairs.append((variable, value))
        backend.batch_set_value(pairs)

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on {self.name}, but the layer "
                             "isn't built. Call it on an input first.")
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    # --- the call history ---------------------------------------------------------------------
    def _node_attribute(self, attribute, what):
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no {what} to return.")
        tensors = getattr(self._inbound_nodes[0], attribute)
        return tensors[0] if len(tensors) == 1 else tensors

    @property
    def input(self):
        return self._node_attribute("input_tensors", "input")

    @property
    def output(self):
        return self._node_attribute("output_tensors", "output")

    @property
    def input_shape(self):
        value = self.input
        if isinstance(value, list):
            return [tuple(t.shape.as_list()) for t in value]
        return tuple(value.shape.as_list())

    @property
    def output_shape(self):
        value = self.output
        if isinstance(value, list):
            return [tuple(t.shape.as_list()) for t in value]
        return tuple(value.shape.as_list())

    # --- configuration ------------------------------------------------------------------------
    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": None if self._dtype is None else getattr(self._dtype, "name",
                                                                      self._dtype)}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def pop_keras_kwargs(kwargs):
    """Removes Keras's common layer arguments from `kwargs`; returns them as a dict."""
    unknown = set(kwargs) - set(KERAS_KWARGS) - {"activity_regularizer", "dtype", "name",
                                                  "trainable"}
    if unknown:
        raise TypeError(f"Keyword argument not understood: {sorted(unknown)}")
    return {key: kwargs.pop(key) for key in KERAS_KWARGS if key in kwargs}


def serialize_initializer(initializer):
    if initializer is None:
        return None
    if hasattr(initializer, "get_config"):
        return initializers.serialize(initializer)
    return getattr(initializer, "__name__", repr(initializer))


def serialize_regularizer(regularizer):
    if regularizer is None or not hasattr(regularizer, "get_config"):
        return None
    return regularizers.serialize(regularizer)
