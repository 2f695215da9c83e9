"""Keras normalisation layers. LayerNormalization normalises each example over its features.
BatchNormalization, over the tf.layers one: while training (the learning phase, fed
True by fit) it normalises with the batch's statistics and its update ops move the moving
averages (Model.fit runs them); otherwise it uses the moving averages."""
from tensorweave.keras import backend, constraints, initializers, regularizers
from tensorweave.keras.engine.base_layer import (Layer, pop_keras_kwargs, serialize_initializer,
                                                 serialize_regularizer)
from tensorweave.layers import normalization as tf_normalization
from tensorweave.ops import array_ops, nn_impl


class BatchNormalization(Layer, tf_normalization.BatchNormalization):
    _SUPPORTS_MASKING = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, fused=None, trainable=True,
                 virtual_batch_size=None, renorm_clipping=None, renorm_momentum=0.99,
                 adjustment=None, **kwargs):
        keras_kwargs = pop_keras_kwargs(kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise ValueError("BatchNormalization: renorm, virtual_batch_size and adjustment "
                             "are not supported")
        if isinstance(axis, (list, tuple)) and len(axis) == 1:
            axis = axis[0]  # how Keras's saved configs spell one axis
        tf_normalization.BatchNormalization.__init__(
            self, axis, momentum, epsilon, center, scale, initializers.get(beta_initializer),
            initializers.get(gamma_initializer), initializers.get(moving_mean_initializer),
            initializers.get(moving_variance_initializer), regularizers.get(beta_regularizer),
            regularizers.get(gamma_regularizer), constraints.get(beta_constraint),
            constraints.get(gamma_constraint), False, fused, trainable, None, **kwargs)
        self._init_keras(kwargs.get("name"), keras_kwargs)

    def call(self, inputs, training=None):
        return tf_normalization.BatchNormalization.call(
            self, inputs, training=backend.training_value(training))

    def get_config(self):
        beta, gamma, mean, variance = self.initializers
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "beta_initializer": serialize_initializer(beta),
                "gamma_initializer": serialize_initializer(gamma),
                "moving_mean_initializer": serialize_initializer(mean),
                "moving_variance_initializer": serialize_initializer(variance),
                "beta_regularizer": serialize_regularizer(self.regularizers[0]),
                "gamma_regularizer": serialize_regularizer(self.regularizers[1])}


class LayerNormalization(Layer):
    """Normalises each example over `axis` (the last by default) to zero mean and unit
    variance, then scales by gamma and shifts by beta (per feature)."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else [axis]
        self.epsilon, self.center, self.scale = epsilon, center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)

    def build(self, input_shape):
        rank = input_shape.ndims
        self.axis = sorted(a % rank for a in self.axis)
        dims = input_shape.as_list()
        shape = tuple(dims[a] for a in self.axis)
        if None in shape:
            raise ValueError(f"LayerNormalization {self.name}: the normalised axes {self.axis} "
                             f"must have known sizes, got {input_shape}")
        self.gamma = self.add_weight("gamma", shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight("beta", shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None

    def call(self, inputs):
        rank = inputs.shape.ndims
        mean, variance = nn_impl.moments(inputs, self.axis, keep_dims=True)
        broadcast = [inputs.shape.as_list()[a] if a in self.axis else 1 for a in range(rank)]

        def shaped(weight):
            return None if weight is None else array_ops.reshape(weight, broadcast)

        return nn_impl.batch_normalization(inputs, mean, variance, shaped(self.beta),
                                           shaped(self.gamma), self.epsilon)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": serialize_initializer(self.beta_initializer),
                "gamma_initializer": serialize_initializer(self.gamma_initializer)}
