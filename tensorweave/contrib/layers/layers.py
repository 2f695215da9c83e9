"""The layer functions of `tf.contrib.layers` (and slim): fully_connected, convolution (1-3-D),
conv2d_transpose, pooling, flatten, dropout, one_hot_encoding, embed_sequence, repeat, stack.

Each opens a variable scope (default names as TF 1.x: 'fully_connected', 'Conv',
'Conv2d_transpose', ...; made unique, 'Conv_1') holding model variables `weights` and `biases`,
takes its defaults from arg_scope, applies `normalizer_fn` (then no biases) and
`activation_fn`, and adds its output to `outputs_collections` under the scope's name.
"""
import numpy as np

from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.framework.variables import model_variable
from tensorweave.contrib.layers.initializers import xavier_initializer
from tensorweave.contrib.layers.utils import (collect_named_outputs, scope_alias,
                                              variable_collections)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers import core as core_layers
from tensorweave.layers.base import normalize_tuple
from tensorweave.layers.conv_transpose import transpose_output_shape
from tensorweave.layers.convolutional import bias_format, convolve
from tensorweave.ops import (conv3d_ops, conv_ops, indexing_ops, init_ops, math_ops,
                             nn_impl, nn_ops, variable_scope)


def _finish(outputs, sc_name, num_outputs, dtype, normalizer_fn, normalizer_params,
            biases_initializer, biases_regularizer, variables_collections, trainable,
            activation_fn, outputs_collections, data_format="NHWC"):
    """normalizer or biases, then the activation; collects the outputs."""
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    elif biases_initializer is not None:
        biases = model_variable("biases", shape=[num_outputs], dtype=dtype,
                                initializer=biases_initializer, regularizer=biases_regularizer,
                                collections=variable_collections(variables_collections,
                                                                 "biases"),
                                trainable=trainable)
        outputs = conv_ops.bias_add(outputs, biases, data_format=data_format)
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, sc_name, outputs)


def _weights(shape, dtype, initializer, regularizer, variables_collections, trainable):
    return model_variable("weights", shape=shape, dtype=dtype, initializer=initializer,
                          regularizer=regularizer,
                          collections=variable_collections(variables_collections, "weights"),
                          trainable=trainable)


def _float_dtype(inputs):
    return inputs.dtype if inputs.dtype.is_floating else dtypes.float32


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn_ops.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=xavier_initializer(),
                    weights_regularizer=None, biases_initializer=init_ops.zeros_initializer(),
                    biases_regularizer=None, reuse=None, variables_collections=None,
                    outputs_collections=None, trainable=True, scope=None):
    """activation_fn(inputs @ weights + biases) over the last dimension of `inputs`."""
    if not isinstance(num_outputs, (int, np.integer)) or num_outputs <= 0:
        raise ValueError(f"fully_connected: num_outputs must be a positive int, got "
                         f"{num_outputs!r}")
    with variable_scope.variable_scope(scope, "fully_connected", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        depth = inputs.shape.as_tuple()[-1] if rank else None
        if rank is None or rank < 2 or depth is None:
            raise ValueError(f"fully_connected {sc.name}: inputs must have rank >= 2 and a "
                             f"defined last dimension, got shape {inputs.shape}")
        dtype = _float_dtype(inputs)
        weights = _weights([depth, int(num_outputs)], dtype, weights_initializer,
                           weights_regularizer, variables_collections, trainable)
        if rank == 2:
            outputs = math_ops.matmul(inputs, weights)
        else:
            outputs = math_ops.tensordot(inputs, weights, [[rank - 1], [0]])
        return _finish(outputs, sc.name, int(num_outputs), dtype, normalizer_fn,
                       normalizer_params, biases_initializer, biases_regularizer,
                       variables_collections, trainable, activation_fn, outputs_collections)


_CHANNELS_FIRST = ("NCW", "NCHW", "NCDHW")
_OP_FORMATS = {(1, False): "NWC", (1, True): "NCW", (2, False): "NHWC", (2, True): "NCHW",
               (3, False): "NDHWC", (3, True): "NCDHW"}


def _op_format(data_format, spatial, caller):
    if data_format is not None and data_format not in _CHANNELS_FIRST + ("NWC", "NHWC",
                                                                         "NDHWC"):
        raise ValueError(f"{caller}: data_format must be channels last (NWC, NHWC, NDHWC) or "
                         f"first (NCW, NCHW, NCDHW), got {data_format!r}")
    return _OP_FORMATS[(spatial, data_format in _CHANNELS_FIRST)]


@add_arg_scope
def convolution(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
                rate=1, activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                weights_initializer=xavier_initializer(), weights_regularizer=None,
                biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None,
                reuse=None, variables_collections=None, outputs_collections=None,
                trainable=True, scope=None, conv_dims=None):
    """A 1-, 2- or 3-D convolution (from the rank of `inputs`, or `conv_dims`) with weights
    [*kernel_size, in_channels, num_outputs]."""
    with variable_scope.variable_scope(scope, "Conv", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        caller = f"convolution {sc.name}"
        if rank not in (3, 4, 5):
            raise ValueError(f"{caller}: inputs must have rank 3, 4 or 5 (1-3 spatial "
                             f"dimensions), got shape {inputs.shape}")
        if conv_dims is not None and conv_dims + 2 != rank:
            raise ValueError(f"{caller}: a {conv_dims}-D convolution needs inputs of rank "
                             f"{conv_dims + 2}, got shape {inputs.shape}")
        spatial = rank - 2
        op_format = _op_format(data_format, spatial, caller)
        channels = inputs.shape.as_tuple()[1 if op_format in _CHANNELS_FIRST else -1]
        if channels is None:
            raise ValueError(f"{caller}: the channel dimension of the inputs must be defined, "
                             f"got shape {inputs.shape}")
        kernel_size = normalize_tuple(kernel_size, spatial, "kernel_size")
        strides = normalize_tuple(stride, spatial, "stride")
        dilations = normalize_tuple(rate, spatial, "rate")
        dtype = _float_dtype(inputs)
        weights = _weights(list(kernel_size) + [channels, int(num_outputs)], dtype,
                           weights_initializer, weights_regularizer, variables_collections,
                           trainable)
        outputs = convolve(spatial, inputs, weights, strides, padding.upper(), op_format,
                           dilations)
        return _finish(outputs, sc.name, int(num_outputs), dtype, normalizer_fn,
                       normalizer_params, biases_initializer, biases_regularizer,
                       variables_collections, trainable, activation_fn, outputs_collections,
                       bias_format(op_format))


def _with_dims(conv_dims, name):
    def layer(*args, **kwargs):
        return convolution(*args, conv_dims=conv_dims, **kwargs)
    layer.__name__ = layer.__qualname__ = name
    layer.__doc__ = f"`convolution` of {conv_dims} spatial dimension(s)."
    return layer


# Each is its own arg_scope key, as in TF (arg_scope([conv2d]) does not reach conv3d).
convolution1d = add_arg_scope(_with_dims(1, "convolution1d"))
convolution2d = add_arg_scope(_with_dims(2, "convolution2d"))
convolution3d = add_arg_scope(_with_dims(3, "convolution3d"))
conv1d, conv2d, conv3d = convolution1d, convolution2d, convolution3d


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                            data_format="NHWC", activation_fn=nn_ops.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=xavier_initializer(),
                            weights_regularizer=None,
                            biases_initializer=init_ops.zeros_initializer(),
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """The transposed 2-D convolution with weights [kh, kw, num_outputs, in_channels]."""
    with variable_scope.variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse) as sc:
        return transposed_convolution(
            sc, 2, inputs, num_outputs, kernel_size, stride, padding, data_format,
            activation_fn, normalizer_fn, normalizer_params, weights_initializer,
            weights_regularizer, biases_initializer, biases_regularizer,
            variables_collections, outputs_collections, trainable)


def transposed_convolution(sc, spatial, inputs, num_outputs, kernel_size, stride, padding,
                           data_format, activation_fn, normalizer_fn, normalizer_params,
                           weights_initializer, weights_regularizer, biases_initializer,
                           biases_regularizer, variables_collections, outputs_collections,
                           trainable):
    """The body of conv2d_transpose / conv3d_transpose inside their variable scope `sc`:
    weights [*kernel_size, num_outputs, in_channels]."""
    inputs = convert_to_tensor(inputs)
    caller = f"conv{spatial}d_transpose {sc.name}"
    if inputs.shape.ndims != spatial + 2:
        raise ValueError(f"{caller}: inputs must have rank {spatial + 2}, got shape "
                         f"{inputs.shape}")
    op_format = _op_format(data_format, spatial, caller)
    first = op_format in _CHANNELS_FIRST
    channels = inputs.shape.as_tuple()[1 if first else -1]
    if channels is None:
        raise ValueError(f"{caller}: the channel dimension of the inputs must be defined, "
                         f"got shape {inputs.shape}")
    kernel_size = normalize_tuple(kernel_size, spatial, "kernel_size")
    strides = normalize_tuple(stride, spatial, "stride")
    dtype = _float_dtype(inputs)
    weights = _weights(list(kernel_size) + [int(num_outputs), channels], dtype,
                       weights_initializer, weights_regularizer, variables_collections,
                       trainable)
    shape = transpose_output_shape(inputs, kernel_size, strides, padding.upper(),
                                   int(num_outputs), first)
    full_strides = [1, 1, *strides] if first else [1, *strides, 1]
    op = conv_ops.conv2d_transpose if spatial == 2 else conv3d_ops.conv3d_transpose
    outputs = op(inputs, weights, shape, full_strides, padding.upper(), data_format=op_format)
    return _finish(outputs, sc.name, int(num_outputs), dtype, normalizer_fn,
                   normalizer_params, biases_initializer, biases_regularizer,
                   variables_collections, trainable, activation_fn, outputs_collections,
                   bias_format(op_format))


conv2d_transpose = convolution2d_transpose


def _pool(op, default_name, spatial, inputs, kernel_size, stride, padding, data_format,
          outputs_collections, scope):
    with graph_lib.get_default_graph().name_scope(scope or default_name) as name_scope:
        inputs = convert_to_tensor(inputs)
        op_format = _op_format(data_format, spatial, default_name)
        first = op_format in _CHANNELS_FIRST

        def full(values):
            values = list(normalize_tuple(values, spatial, "kernel_size / stride"))
            return [1, 1] + values if first else [1] + values + [1]

        outputs = op(inputs, full(kernel_size), full(stride), padding.upper(),
                     data_format=op_format)
        return collect_named_outputs(outputs_collections, scope_alias(name_scope), outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    return _pool(conv_ops.max_pool, "MaxPool2D", 2, inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    return _pool(conv_ops.avg_pool, "AvgPool2D", 2, inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def max_pool3d(inputs, kernel_size, stride=2, padding="VALID", data_format="NDHWC",
               outputs_collections=None, scope=None):
    return _pool(conv3d_ops.max_pool3d, "MaxPool3D", 3, inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def avg_pool3d(inputs, kernel_size, stride=2, padding="VALID", data_format="NDHWC",
               outputs_collections=None, scope=None):
    return _pool(conv3d_ops.avg_pool3d, "AvgPool3D", 3, inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, ...] -> [batch, k]."""
    with graph_lib.get_default_graph().name_scope(scope or "Flatten") as name_scope:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is None or inputs.shape.ndims < 2:
            raise ValueError(f"flatten: inputs must have at least 2 dimensions, got shape "
                             f"{inputs.shape}")
        outputs = core_layers.Flatten().call(inputs)
        return collect_named_outputs(outputs_collections, scope_alias(name_scope), outputs)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None,
            scope=None, seed=None):
    """Dropout while `is_training` (a Python bool or a bool tensor); the identity otherwise."""
    with graph_lib.get_default_graph().name_scope(scope or "Dropout") as name_scope:
        inputs = convert_to_tensor(inputs)
        layer = core_layers.Dropout(rate=1 - keep_prob, noise_shape=noise_shape, seed=seed)
        outputs = layer.call(inputs, training=is_training)
        return collect_named_outputs(outputs_collections, scope_alias(name_scope), outputs)


@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0, outputs_collections=None,
                     scope=None):
    with graph_lib.get_default_graph().name_scope(scope or "OneHotEncoding") as name_scope:
        labels = convert_to_tensor(labels)
        if labels.dtype == dtypes.int32:
            labels = math_ops.cast(labels, dtypes.int64)
        outputs = indexing_ops.one_hot(labels, num_classes, on_value=on_value,
                                       off_value=off_value)
        return collect_named_outputs(outputs_collections, scope_alias(name_scope), outputs)


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None,
                   regularizer=None, trainable=True, scope=None, reuse=None):
    """The [vocab_size, embed_dim] model variable `embeddings` looked up at `ids`."""
    if vocab_size is None or embed_dim is None:
        raise ValueError("embed_sequence: vocab_size and embed_dim are required")
    with variable_scope.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        embeddings = model_variable("embeddings", shape=[vocab_size, embed_dim],
                                    initializer=initializer, regularizer=regularizer,
                                    trainable=trainable)
        return nn_impl.embedding_lookup(embeddings, ids)


def _layer_name(layer, fallback):
    if hasattr(layer, "__name__"):
        return layer.__name__
    if hasattr(layer, "func"):  # functools.partial
        return layer.func.__name__
    return fallback


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """`layer` applied `repetitions` times, the i-th under scope '<scope>_<i>' inside a scope
    (default 'Repeat'): slim.repeat(net, 2, slim.conv2d, 64, [3, 3], scope='conv1') makes
    conv1/conv1_1/weights and conv1/conv1_2/weights."""
    scope = kwargs.pop("scope", None)
    with variable_scope.variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer, "repeat")
        for index in range(repetitions):
            kwargs["scope"] = f"{scope}_{index + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """`layer` applied once per entry of `stack_args` (its positional arguments), the i-th under
    scope '<scope>_<i>' inside a scope (default 'Stack')."""
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError(f"stack: stack_args must be a list or tuple, got {stack_args!r}")
    with variable_scope.variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer, "stack")
        for index, layer_args in enumerate(stack_args):
            kwargs["scope"] = f"{scope}_{index + 1}"
            layer_args = layer_args if isinstance(layer_args, (list, tuple)) else [layer_args]
            outputs = layer(outputs, *layer_args, **kwargs)
        return outputs


@add_arg_scope
def separable_convolution2d(inputs, num_outputs, kernel_size, depth_multiplier=1, stride=1,
                            padding="SAME", data_format="NHWC", rate=1,
                            activation_fn=nn_ops.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=xavier_initializer(),
                            pointwise_initializer=None, weights_regularizer=None,
                            biases_initializer=init_ops.zeros_initializer(),
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """A depthwise convolution (model variable depthwise_weights [kh, kw, in, depth_multiplier])
    followed, unless num_outputs is None, by a 1x1 one (pointwise_weights [1, 1, in *
    depth_multiplier, num_outputs]); then biases (or normalizer_fn) and activation_fn."""
    with variable_scope.variable_scope(scope, "SeparableConv2d", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        caller = f"separable_conv2d {sc.name}"
        if inputs.shape.ndims != 4:
            raise ValueError(f"{caller}: inputs must have rank 4, got shape {inputs.shape}")
        op_format = _op_format(data_format, 2, caller)
        first = op_format == "NCHW"
        channels = inputs.shape.as_tuple()[1 if first else 3]
        if channels is None:
            raise ValueError(f"{caller}: the channel dimension of the inputs must be defined, "
                             f"got shape {inputs.shape}")
        kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        strides = list(normalize_tuple(stride, 2, "stride"))
        dtype = _float_dtype(inputs)
        depthwise = model_variable(
            "depthwise_weights", shape=list(kernel_size) + [channels, depth_multiplier],
            dtype=dtype, initializer=weights_initializer, regularizer=weights_regularizer,
            collections=variable_collections(variables_collections, "weights"),
            trainable=trainable)
        full_strides = [1, 1] + strides if first else [1] + strides + [1]
        rates = list(normalize_tuple(rate, 2, "rate"))
        outputs = conv_ops.depthwise_conv2d(inputs, depthwise, full_strides, padding.upper(),
                                            rate=rates, data_format=op_format)
        if num_outputs is None:
            num_outputs = channels * depth_multiplier
        else:
            pointwise = model_variable(
                "pointwise_weights", shape=[1, 1, channels * depth_multiplier, num_outputs],
                dtype=dtype, initializer=pointwise_initializer or weights_initializer,
                regularizer=weights_regularizer,
                collections=variable_collections(variables_collections, "weights"),
                trainable=trainable)
            outputs = conv_ops.conv2d(outputs, pointwise, [1, 1, 1, 1], "VALID",
                                      data_format=op_format)
        return _finish(outputs, sc.name, int(num_outputs), dtype, normalizer_fn,
                       normalizer_params, biases_initializer, biases_regularizer,
                       variables_collections, trainable, activation_fn, outputs_collections,
                       bias_format(op_format))


separable_conv2d = separable_convolution2d


@add_arg_scope
def bias_add(inputs, activation_fn=None, initializer=init_ops.zeros_initializer(),
             regularizer=None, reuse=None, variables_collections=None, outputs_collections=None,
             trainable=True, data_format="NHWC", scope=None):
    """inputs + biases (a model variable along the channel dimension), then activation_fn."""
    with variable_scope.variable_scope(scope, "BiasAdd", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None or rank < 2:
            raise ValueError(f"bias_add {sc.name}: inputs must have a known rank >= 2, got "
                             f"shape {inputs.shape}")
        if data_format not in ("NHWC", "NCHW"):
            raise ValueError(f"bias_add {sc.name}: data_format must be 'NHWC' or 'NCHW', got "
                             f"{data_format!r}")
        channels = inputs.shape.as_tuple()[1 if data_format == "NCHW" and rank > 2 else -1]
        if channels is None:
            raise ValueError(f"bias_add {sc.name}: the channel dimension of the inputs must be "
                             f"defined, got shape {inputs.shape}")
        return _finish(inputs, sc.name, channels, inputs.dtype, None, None, initializer,
                       regularizer, variables_collections, trainable, activation_fn,
                       outputs_collections, data_format)


def softmax(logits, scope=None):
    """Softmax over the last dimension of logits of any rank >= 2."""
    with graph_lib.get_default_graph().name_scope(scope or "softmax"):
        logits = convert_to_tensor(logits)
        if logits.shape.ndims is not None and logits.shape.ndims < 2:
            raise ValueError(f"softmax: logits must have rank >= 2, got shape {logits.shape}")
        return nn_ops.softmax(logits)
