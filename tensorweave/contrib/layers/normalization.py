"""`batch_norm` and `layer_norm` of tf.contrib.layers (and slim).

batch_norm keeps model variables beta (center), gamma (scale; off by default, as in TF),
moving_mean and moving_variance under scope 'BatchNorm'. While training it normalises with the
batch's statistics and makes update ops moving the averages towards them by (1 - decay): added
to `updates_collections` (GraphKeys.UPDATE_OPS: run them with the train op), or, with
updates_collections=None, run before the output is produced. `is_training` may be a bool tensor:
both paths are built and chosen per run, and the updates then move the averages by 0 when it is
False. As TF's fused kernel does (its default for 2-D and 4-D inputs), the moving variance then
tracks the Bessel-corrected batch variance.
"""
import numpy as np

from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.framework.variables import model_variable
from tensorweave.contrib.layers.utils import collect_named_outputs, variable_collections
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.layers.base import select_by_training
from tensorweave.ops import (array_ops, control_flow_ops, init_ops, math_ops, nn_impl,
                             state_ops, variable_scope)


def _param(name, shape, dtype, initializers, regularizers, collections, trainable, default):
    return model_variable(name, shape=shape, dtype=dtype,
                          initializer=(initializers or {}).get(name, default),
                          regularizer=(regularizers or {}).get(name),
                          collections=variable_collections(collections, name),
                          trainable=trainable)


def _is_python_bool(value):
    return isinstance(value, (bool, np.bool_))


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC",
               zero_debias_moving_mean=False, scope=None, renorm=False, renorm_clipping=None,
               renorm_decay=0.99, adjustment=None):
    if batch_weights is not None or renorm or zero_debias_moving_mean or adjustment is not None:
        raise ValueError("batch_norm: batch_weights, renorm, zero_debias_moving_mean and "
                         "adjustment are not supported")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"batch_norm: data_format must be 'NHWC' or 'NCHW', got "
                         f"{data_format!r}")
    with variable_scope.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None or rank < 2:
            raise ValueError(f"batch_norm {sc.name}: inputs must have a known rank >= 2, got "
                             f"shape {inputs.shape}")
        axis = 1 if data_format == "NCHW" and rank > 2 else rank - 1
        depth = inputs.shape.as_tuple()[axis]
        if depth is None:
            raise ValueError(f"batch_norm {sc.name}: dimension {axis} of the inputs must be "
                             f"defined, got shape {inputs.shape}")
        dtype = inputs.dtype
        params = (param_initializers, param_regularizers, variables_collections)
        beta = _param("beta", [depth], dtype, *params, trainable,
                      init_ops.zeros_initializer()) if center else None
        gamma = _param("gamma", [depth], dtype, *params, trainable,
                       init_ops.ones_initializer()) if scale else None
        moving_mean = _param("moving_mean", [depth], dtype, *params, False,
                             init_ops.zeros_initializer())
        moving_variance = _param("moving_variance", [depth], dtype, *params, False,
                                 init_ops.ones_initializer())
        axes = [a for a in range(rank) if a != axis]
        mean, variance = moving_mean.read_value(), moving_variance.read_value()
        updates = []
        if not (_is_python_bool(is_training) and not is_training):
            batch_mean, batch_variance = nn_impl.moments(inputs, axes)
            tracked = batch_variance
            if fused if fused is not None else rank in (2, 4):
                count = nn_impl.reduced_count(inputs, axes)
                tracked = batch_variance * (count / math_ops.maximum(count - 1, 1))
            step = convert_to_tensor(1 - decay, dtype=dtype)
            if _is_python_bool(is_training):
                mean, variance = batch_mean, batch_variance
            else:
                mean = select_by_training(is_training, batch_mean, mean)
                variance = select_by_training(is_training, batch_variance, variance)
                step = select_by_training(is_training, step, convert_to_tensor(0, dtype=dtype))
            updates = [
                state_ops.assign_sub(moving_mean, (moving_mean.read_value() - batch_mean) * step,
                                     name="AssignMovingAvg"),
                state_ops.assign_sub(moving_variance,
                                     (moving_variance.read_value() - tracked) * step,
                                     name="AssignMovingAvg_1")]
            if isinstance(updates_collections, str):
                updates_collections = [updates_collections]
            for collection in updates_collections or []:
                for update in updates:
                    graph_lib.add_to_collection(collection, update)
        shape = [1] * rank
        shape[axis] = depth

        def shaped(value):
            return value if value is None or axis == rank - 1 else array_ops.reshape(value,
                                                                                      shape)

        if updates and not updates_collections:
            # No collection to run the updates from: they run before the output is produced.
            inputs = control_flow_ops.with_dependencies(updates, inputs)
        outputs = nn_impl.batch_normalization(inputs, shaped(mean), shaped(variance),
                                              shaped(beta), shaped(gamma), epsilon)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Normalises each example over dimensions begin_norm_axis.. (Ba et al.), then scales by
    gamma and shifts by beta, both shaped as the dimensions from begin_params_axis on."""
    with variable_scope.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError(f"layer_norm {sc.name}: inputs must have a known rank, got shape "
                             f"{inputs.shape}")
        begin_norm = begin_norm_axis % rank if begin_norm_axis < 0 else begin_norm_axis
        begin_params = begin_params_axis % rank if begin_params_axis < 0 else begin_params_axis
        if not 0 < begin_norm < rank or not 0 <= begin_params < rank:
            raise ValueError(f"layer_norm {sc.name}: begin_norm_axis ({begin_norm_axis}) and "
                             f"begin_params_axis ({begin_params_axis}) must be in [1, rank) for "
                             f"inputs of rank {rank}")
        params_shape = list(inputs.shape.as_tuple()[begin_params:])
        if None in params_shape:
            raise ValueError(f"layer_norm {sc.name}: dimensions {begin_params}.. of the inputs "
                             f"must be defined, got shape {inputs.shape}")
        params = (None, None, variables_collections)
        beta = _param("beta", params_shape, inputs.dtype, *params, trainable,
                      init_ops.zeros_initializer()) if center else None
        gamma = _param("gamma", params_shape, inputs.dtype, *params, trainable,
                       init_ops.ones_initializer()) if scale else None
        mean, variance = nn_impl.moments(inputs, list(range(begin_norm, rank)), keep_dims=True)
        outputs = nn_impl.batch_normalization(inputs, mean, variance, beta, gamma, 1e-12)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)
