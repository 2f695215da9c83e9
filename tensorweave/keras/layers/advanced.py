"""Keras's activation layers with parameters (LeakyReLU, ReLU, ELU, Softmax) and the layer
wrappers TimeDistributed (a layer applied to every timestep) and Bidirectional (an RNN run
both ways, outputs merged)."""
import copy

from tensorweave.keras import activations
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine import serialization
from tensorweave.keras.layers.recurrent import RNN
from tensorweave.ops import array_ops, pad_tile_ops


class LeakyReLU(Layer):
    _SUPPORTS_MASKING = True

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return activations.relu(inputs, alpha=self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class ReLU(Layer):
    _SUPPORTS_MASKING = True

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0:
            raise ValueError(f"ReLU: max_value must be >= 0, got {max_value}")
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, \
            threshold

    def call(self, inputs):
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}


class ELU(Layer):
    _SUPPORTS_MASKING = True

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return activations.elu(inputs, self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class Softmax(Layer):
    _SUPPORTS_MASKING = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return activations.softmax(inputs, self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class TimeDistributed(Layer):
    """Applies `layer` to every timestep of [batch, time, ...] inputs (one set of weights):
    the time axis is folded into the batch, the layer called once, then unfolded. A mask on the
    time axis passes through."""

    _SUPPORTS_MASKING = True

    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        self.layer = layer

    @property
    def trainable_weights(self):
        return self.layer.trainable_weights if self.trainable else []

    @property
    def non_trainable_weights(self):
        return self.layer.non_trainable_weights if self.trainable else self.layer.weights

    @property
    def weights(self):
        return self.layer.weights

    @property
    def weight_regularization_losses(self):
        return self.layer.weight_regularization_losses

    def call(self, inputs, training=None):
        dims = inputs.shape.as_list()
        if len(dims) < 3 or dims[1] is None or None in dims[2:]:
            raise ValueError(f"TimeDistributed {self.name}: inputs must be [batch, time, ...] "
                             f"with known time and feature sizes, got {inputs.shape}")
        folded = array_ops.reshape(inputs, [-1] + dims[2:])
        kwargs = {"training": training} if training is not None and \
            self.layer._expects_training_arg() else {}
        outputs = self.layer(folded, **kwargs)
        return array_ops.reshape(outputs, [-1, dims[1]] + outputs.shape.as_list()[1:])

    def get_config(self):
        return {**super().get_config(), "layer": serialization.serialize_layer(self.layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(serialization.deserialize_layer(config.pop("layer")), **config)


class Bidirectional(Layer):
    """Runs an RNN layer forwards and a copy of it backwards over the sequence; merges their
    outputs with merge_mode 'concat' (default), 'sum', 'mul', 'ave', or returns both (None)."""

    _MERGES = ("concat", "sum", "mul", "ave", None)

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layer, RNN):
            raise ValueError(f"Bidirectional: `layer` must be an RNN layer (LSTM, GRU, "
                             f"SimpleRNN), got {layer!r}")
        if merge_mode not in self._MERGES:
            raise ValueError(f"Invalid merge mode {merge_mode!r}: must be one of "
                             f"{self._MERGES}")
        if layer.return_state or weights is not None:
            raise ValueError("Bidirectional: return_state=True and initial `weights` are not "
                             "supported (set weights with set_weights after the first call)")
        self.forward_layer = layer
        if backward_layer is None:
            backward_layer = type(layer).from_config(
                {**copy.deepcopy(layer.get_config()), "name": f"backward_{layer.name}",
                 "go_backwards": not layer.go_backwards})
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return self.forward_layer.trainable_weights + self.backward_layer.trainable_weights

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            return self.forward_layer.weights + self.backward_layer.weights
        return self.forward_layer.non_trainable_weights + \
            self.backward_layer.non_trainable_weights

    @property
    def weights(self):
        return self.forward_layer.weights + self.backward_layer.weights

    @property
    def weight_regularization_losses(self):
        return self.forward_layer.weight_regularization_losses + \
            self.backward_layer.weight_regularization_losses

    def compute_mask(self, inputs, mask=None):
        return mask if self.forward_layer.return_sequences and self.merge_mode else None

    def call(self, inputs, training=None, mask=None):
        extra = {} if mask is None else {"mask": mask}
        forward = self.forward_layer(inputs, training=training, **extra)
        backward = self.backward_layer(inputs, training=training, **extra)
        if self.forward_layer.return_sequences:  # align the backward outputs in time
            backward = pad_tile_ops.reverse(backward, [1])
        if self.merge_mode == "concat":
            return array_ops.concat([forward, backward], -1)
        if self.merge_mode == "sum":
            return forward + backward
        if self.merge_mode == "mul":
            return forward * backward
        if self.merge_mode == "ave":
            return (forward + backward) / 2
        return [forward, backward]

    def get_config(self):
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": serialization.serialize_layer(self.forward_layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(serialization.deserialize_layer(config.pop("layer")), **config)
