"""More of tf.contrib.layers: instance_norm and group_norm (style transfer and GAN programs use
them), unit_norm, maxout, and the fully_connected shortcuts linear / relu / relu6."""
import functools

from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.layers.layers import fully_connected
from tensorweave.contrib.layers.normalization import _param
from tensorweave.contrib.layers.utils import collect_named_outputs
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import (activation_ops, array_ops, init_ops, math_ops, nn_impl, nn_ops,
                             reduction_ops, variable_scope)

linear = functools.partial(fully_connected, activation_fn=None)
relu = functools.partial(fully_connected, activation_fn=nn_ops.relu)
relu6 = functools.partial(fully_connected, activation_fn=activation_ops.relu6)


@add_arg_scope
def instance_norm(inputs, center=True, scale=True, epsilon=1e-6, activation_fn=None,
                  param_initializers=None, reuse=None, variables_collections=None,
                  outputs_collections=None, trainable=True, data_format="NHWC", scope=None):
    """Each example's channels normalised over their spatial dimensions (Ulyanov et al.),
    then scaled by gamma and shifted by beta ([channels])."""
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"instance_norm: data_format must be NHWC or NCHW, got {data_format!r}")
    with variable_scope.variable_scope(scope, "InstanceNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None or rank < 3:
            raise ValueError(f"instance_norm {sc.name}: inputs must have rank >= 3, got shape "
                             f"{inputs.shape}")
        channel_axis = 1 if data_format == "NCHW" else rank - 1
        channels = inputs.shape.as_tuple()[channel_axis]
        if channels is None:
            raise ValueError(f"instance_norm {sc.name}: the channel dimension must be known")
        axes = [a for a in range(1, rank) if a != channel_axis]
        mean, variance = nn_impl.moments(inputs, axes, keep_dims=True)
        broadcast = [1] * rank
        broadcast[channel_axis] = channels
        outputs = _normalised(inputs, mean, variance, epsilon, channels, broadcast, center,
                              scale, param_initializers, variables_collections, trainable)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def _normalised(inputs, mean, variance, epsilon, channels, broadcast, center, scale,
                param_initializers, variables_collections, trainable):
    outputs = (inputs - mean) * math_ops.rsqrt(variance + epsilon)
    return _affine(outputs, channels, broadcast, center, scale, param_initializers,
                   variables_collections, trainable)


def _affine(outputs, channels, broadcast, center, scale, param_initializers,
            variables_collections, trainable):
    """outputs * gamma + beta, the [channels] parameters broadcast along `broadcast`."""
    params = (param_initializers, None, variables_collections)
    beta = _param("beta", [channels], outputs.dtype, *params, trainable,
                  init_ops.zeros_initializer()) if center else None
    gamma = _param("gamma", [channels], outputs.dtype, *params, trainable,
                   init_ops.ones_initializer()) if scale else None
    if gamma is not None:
        outputs = outputs * array_ops.reshape(gamma, broadcast)
    if beta is not None:
        outputs = outputs + array_ops.reshape(beta, broadcast)
    return outputs


@add_arg_scope
def group_norm(inputs, groups=32, channels_axis=-1, reduction_axes=(-3, -2), center=True,
               scale=True, epsilon=1e-6, activation_fn=None, param_initializers=None,
               reuse=None, variables_collections=None, outputs_collections=None,
               trainable=True, scope=None, mean_close_to_zero=False):
    """Channels split into `groups` consecutive groups, each normalised over reduction_axes
    and its own channels (Wu & He), then scaled and shifted per channel."""
    with variable_scope.variable_scope(scope, "GroupNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError(f"group_norm {sc.name}: inputs must have a known rank")
        channels_axis = channels_axis % rank
        reduction_axes = [a % rank for a in reduction_axes]
        if channels_axis in reduction_axes:
            raise ValueError(f"group_norm {sc.name}: channels_axis {channels_axis} must not be "
                             f"a reduction axis {reduction_axes}")
        dims = inputs.shape.as_list()
        channels = dims[channels_axis]
        if channels is None or channels % groups:
            raise ValueError(f"group_norm {sc.name}: {channels} channels do not split into "
                             f"{groups} groups")
        shape = array_ops.shape(inputs)
        split = slicing_shape(shape, channels_axis, groups, channels // groups)
        grouped = array_ops.reshape(inputs, split)
        # In the grouped tensor the channel axis became (group, channel in group).
        shifted = [a + 1 if a > channels_axis else a for a in reduction_axes]
        mean, variance = nn_impl.moments(grouped, shifted + [channels_axis + 1], keep_dims=True)
        normalised = array_ops.reshape((grouped - mean) * math_ops.rsqrt(variance + epsilon),
                                       shape)
        broadcast = [1] * rank
        broadcast[channels_axis] = channels
        outputs = _affine(normalised, channels, broadcast, center, scale, param_initializers,
                          variables_collections, trainable)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def slicing_shape(shape, axis, groups, per_group):
    """`shape` (a tensor) with dimension `axis` replaced by [groups, per_group]."""
    return array_ops.concat([shape[:axis], [groups, per_group], shape[axis + 1:]], 0)


def unit_norm(inputs, dim, epsilon=1e-7, scope=None):
    """inputs scaled to unit Euclidean length along `dim`."""
    with variable_scope.variable_scope(scope, "UnitNorm", [inputs]):
        inputs = convert_to_tensor(inputs)
        lengths = math_ops.sqrt(epsilon + reduction_ops.reduce_sum(math_ops.square(inputs), dim,
                                                                   keepdims=True))
        return inputs / lengths


def maxout(inputs, num_units, axis=-1, scope=None):
    """The maximum over each of num_units groups of consecutive channels (Goodfellow et al.)."""
    with variable_scope.variable_scope(scope, "MaxOut", [inputs]):
        inputs = convert_to_tensor(inputs)
        dims = inputs.shape.as_list()
        channels = dims[axis]
        if channels is None or channels % num_units:
            raise ValueError(f"maxout: number of features ({channels}) is not a multiple of "
                             f"num_units ({num_units})")
        axis = axis % len(dims)
        shape = array_ops.shape(inputs)
        grouped = array_ops.reshape(inputs, slicing_shape(shape, axis, num_units,
                                                          channels // num_units))
        return reduction_ops.reduce_max(grouped, axis + 1)
