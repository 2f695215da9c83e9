"""Batch normalisation layer and its functional form.

While training, the layer normalises with the batch's statistics and makes update ops that move
the moving mean and variance towards them (added to GraphKeys.UPDATE_OPS: run them with the
train op). Otherwise it normalises with the moving statistics. `training` may be a Python bool
or a bool tensor; with a tensor both paths are built and chosen per run by a select (no tf.cond
yet), and the updates move the averages by 0 when it is False.
"""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers.base import Layer, as_functional
from tensorweave.ops import array_ops, init_ops, math_ops, nn_impl, state_ops


class BatchNormalization(Layer):
    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=init_ops.zeros_initializer(),
                 gamma_initializer=init_ops.ones_initializer(),
                 moving_mean_initializer=init_ops.zeros_initializer(),
                 moving_variance_initializer=init_ops.ones_initializer(),
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, fused=None, trainable=True,
                 virtual_batch_size=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None:
            raise NotImplementedError("BatchNormalization: renorm and virtual_batch_size are "
                                      "not supported")
        if not isinstance(axis, (int, np.integer)):
            raise ValueError(f"BatchNormalization: axis must be an int, got {axis!r}")
        self.axis, self.momentum, self.epsilon = int(axis), momentum, epsilon
        self.center, self.scale, self.fused = center, scale, fused
        self.initializers = (beta_initializer, gamma_initializer, moving_mean_initializer,
                             moving_variance_initializer)
        self.regularizers = (beta_regularizer, gamma_regularizer)
        self.constraints = (beta_constraint, gamma_constraint)

    def build(self, input_shape):
        rank = input_shape.ndims
        if rank is None:
            raise ValueError(f"BatchNormalization {self.name}: inputs must have a known rank")
        if not -rank <= self.axis < rank:
            raise ValueError(f"BatchNormalization {self.name}: axis {self.axis} is out of range "
                             f"for inputs of rank {rank}")
        self.axis %= rank
        depth = input_shape.as_tuple()[self.axis]
        if depth is None:
            raise ValueError(f"BatchNormalization {self.name}: dimension {self.axis} of the "
                             f"inputs must be defined, got shape {input_shape}")
        beta_init, gamma_init, mean_init, variance_init = self.initializers
        self.gamma = self.add_weight("gamma", [depth], initializer=gamma_init,
                                     regularizer=self.regularizers[1],
                                     constraint=self.constraints[1]) if self.scale else None
        self.beta = self.add_weight("beta", [depth], initializer=beta_init,
                                    regularizer=self.regularizers[0],
                                    constraint=self.constraints[0]) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", [depth], initializer=mean_init,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", [depth],
                                               initializer=variance_init, trainable=False)
        self.built = True

    def call(self, inputs, training=False):
        rank = inputs.shape.ndims
        axes = [i for i in range(rank) if i != self.axis]
        # The moving variance tracks the Bessel-corrected batch variance where TF would use its
        # fused kernel (4-D inputs normalised along the channel axis), the plain one elsewhere.
        fused = self.fused if self.fused is not None else (rank == 4 and self.axis in (1, 3))
        moving_mean = self.moving_mean.read_value()
        moving_variance = self.moving_variance.read_value()
        if isinstance(training, (bool, np.bool_)) and not training:
            mean, variance = moving_mean, moving_variance
        else:
            batch_mean, batch_variance = nn_impl.moments(inputs, axes)
            tracked_variance = batch_variance
            if fused:
                count = nn_impl.reduced_count(inputs, axes)
                tracked_variance = batch_variance * (count / math_ops.maximum(count - 1, 1))
            if isinstance(training, (bool, np.bool_)):
                mean, variance = batch_mean, batch_variance
                decay = convert_to_tensor(1 - self.momentum, dtype=inputs.dtype)
            else:
                training = convert_to_tensor(training, dtype=dtypes.bool)
                mean = math_ops.select(training, batch_mean, moving_mean)
                variance = math_ops.select(training, batch_variance, moving_variance)
                decay = math_ops.select(training,
                                        convert_to_tensor(1 - self.momentum, dtype=inputs.dtype),
                                        convert_to_tensor(0, dtype=inputs.dtype))
            self.add_update([
                state_ops.assign_sub(self.moving_mean, (moving_mean - batch_mean) * decay,
                                     name="AssignMovingAvg"),
                state_ops.assign_sub(self.moving_variance,
                                     (moving_variance - tracked_variance) * decay,
                                     name="AssignMovingAvg_1")])
        broadcast = [1] * rank
        broadcast[self.axis] = -1

        def shaped(value):
            if value is None or self.axis == rank - 1:
                return value
            return array_ops.reshape(value, broadcast)

        return nn_impl.batch_normalization(inputs, shaped(mean), shaped(variance),
                                           shaped(self.beta), shaped(self.gamma), self.epsilon)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=init_ops.zeros_initializer(),
                        gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(),
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer,
                               gamma_initializer, moving_mean_initializer,
                               moving_variance_initializer, beta_regularizer, gamma_regularizer,
                               beta_constraint, gamma_constraint, renorm, fused, trainable,
                               virtual_batch_size, name, _reuse=reuse)
    return as_functional(layer)(inputs, training=training)
