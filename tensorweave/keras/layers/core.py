"""Keras core layers: Dense, Activation, Dropout, Flatten, Reshape, Lambda, Embedding, Masking,
Permute, RepeatVector, ActivityRegularization."""
import numpy as np

from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.keras import activations, backend, constraints, initializers, regularizers
from tensorweave.keras.engine.base_layer import (Layer, pop_keras_kwargs, serialize_initializer,
                                                 serialize_regularizer)
from tensorweave.layers import core as tf_core
from tensorweave.ops import array_ops, math_ops, nn_impl


class Dense(Layer, tf_core.Dense):
    _SUPPORTS_MASKING = True

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        keras_kwargs = pop_keras_kwargs(kwargs)
        tf_core.Dense.__init__(
            self, units, activations.get(activation), use_bias,
            initializers.get(kernel_initializer), initializers.get(bias_initializer),
            regularizers.get(kernel_regularizer), regularizers.get(bias_regularizer),
            regularizers.get(activity_regularizer), constraints.get(kernel_constraint),
            constraints.get(bias_constraint), **kwargs)
        self._init_keras(kwargs.get("name"), keras_kwargs)

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": serialize_initializer(self.kernel_initializer),
                "bias_initializer": serialize_initializer(self.bias_initializer),
                "kernel_regularizer": serialize_regularizer(self.kernel_regularizer),
                "bias_regularizer": serialize_regularizer(self.bias_regularizer),
                "activity_regularizer": serialize_regularizer(self.activity_regularizer)}


class Activation(Layer):
    _SUPPORTS_MASKING = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


class Dropout(Layer, tf_core.Dropout):
    _SUPPORTS_MASKING = True
    """Drops `rate` of the inputs while training: `training` given to the call, else the
    learning phase (fit feeds it True; evaluate and predict leave it False)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        keras_kwargs = pop_keras_kwargs(kwargs)
        tf_core.Dropout.__init__(self, rate, noise_shape, seed, **kwargs)
        self._init_keras(kwargs.get("name"), keras_kwargs)

    def call(self, inputs, training=None):
        return tf_core.Dropout.call(self, inputs, training=backend.training_value(training))

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}


class Flatten(Layer, tf_core.Flatten):
    def __init__(self, data_format=None, **kwargs):
        keras_kwargs = pop_keras_kwargs(kwargs)
        tf_core.Flatten.__init__(self, data_format=data_format, **kwargs)
        self._init_keras(kwargs.get("name"), keras_kwargs)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format or "channels_last"}


class Reshape(Layer):
    """Reshapes each example to `target_shape` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)
        if sum(1 for d in self.target_shape if d == -1) > 1:
            raise ValueError(f"Reshape: can only specify one unknown dimension, got "
                             f"{self.target_shape}")

    def call(self, inputs):
        dims = inputs.shape.as_tuple()
        known = dims is not None and all(d is not None for d in dims[1:])
        if known:
            total = int(np.prod(dims[1:], dtype=np.int64))
            target = int(np.prod([d for d in self.target_shape if d != -1], dtype=np.int64))
            if (-1 not in self.target_shape and total != target) or (
                    -1 in self.target_shape and total % max(target, 1)):
                raise ValueError(f"Reshape {self.name}: total size of new array must be "
                                 f"unchanged, input shape {dims[1:]}, target shape "
                                 f"{self.target_shape}")
        batch = array_ops.gather(array_ops.shape(inputs), 0)
        shape = array_ops.stack([batch] + [convert_to_tensor(d, dtype=batch.dtype)
                                           for d in self.target_shape])
        outputs = array_ops.reshape(inputs, shape)
        if known and -1 not in self.target_shape:
            outputs.set_shape((dims[0],) + self.target_shape)
        return outputs

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


class Permute(Layer):
    """Permutes the non-batch dimensions: `dims` are 1-based, as in Keras."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Permute: invalid permutation `dims` {self.dims}: it must be a "
                             f"permutation of 1..{len(self.dims)}")

    def call(self, inputs):
        return array_ops.transpose(inputs, (0,) + self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """[batch, features] -> [batch, n, features]."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = int(n)

    def call(self, inputs):
        return array_ops.stack([inputs] * self.n, axis=1)

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class Lambda(Layer):
    """Wraps `function(inputs, **arguments)` as a layer (it has no weights)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: function must be callable, got {function!r}")
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape

    def call(self, inputs, mask=None, training=None):
        return self.function(inputs, **self.arguments)

    def get_config(self):
        return {**super().get_config(), "function": getattr(self.function, "__name__", "?"),
                "arguments": self.arguments}

    @classmethod
    def from_config(cls, config):
        raise ValueError(f"Lambda layer {config.get('name')}: its Python function "
                         f"({config.get('function')}) is not part of the config and cannot be "
                         "rebuilt from it; build this part of the model in code")


class Embedding(Layer):
    """Integer indices [batch, ...] -> rows of an [input_dim, output_dim] matrix."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, activity_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, input_length=None, **kwargs):
        if "input_shape" not in kwargs and "batch_input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,) if not isinstance(
                input_length, (list, tuple)) else tuple(input_length)
        super().__init__(activity_regularizer=regularizers.get(activity_regularizer), **kwargs)
        self.mask_zero = bool(mask_zero)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        if embeddings_initializer == "uniform":
            embeddings_initializer = initializers.RandomUniform()
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.input_length = input_length

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)

    def call(self, inputs):
        if not inputs.dtype.is_integer:
            inputs = math_ops.cast(inputs, "int32")
        return nn_impl.embedding_lookup(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        """With mask_zero, index 0 is padding: the mask is inputs != 0."""
        if not self.mask_zero:
            return None
        return math_ops.not_equal(inputs, array_ops.zeros_like(inputs))

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim, "mask_zero": self.mask_zero,
                "embeddings_initializer": serialize_initializer(self.embeddings_initializer),
                "input_length": self.input_length}


class Masking(Layer):
    """Masks the timesteps whose features all equal `mask_value`: zeroes them, and marks them
    as padding in the mask ([batch, time]) that RNN layers and losses then skip."""

    _SUPPORTS_MASKING = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs, mask=None):
        return math_ops.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = self.compute_mask(inputs)
        return inputs * math_ops.cast(array_ops.expand_dims(keep, -1), inputs.dtype)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}


class ActivityRegularization(Layer):
    """The identity, adding l1 * sum(|x|) + l2 * sum(x**2) (over the batch) to the losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1, l2), **kwargs)
        self.l1, self.l2 = l1, l2

    def call(self, inputs):
        return array_ops.identity(inputs)

    def get_config(self):
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}
