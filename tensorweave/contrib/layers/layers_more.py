"""The rest of `tf.contrib.layers`' layer functions: convolution3d_transpose,
convolution2d_in_plane, dense_to_sparse, scale_gradient, spatial_softmax,
images_to_sequence / sequence_to_images, the TF 0.x legacy_fully_connected family and
embedding_lookup_unique, with TF 1.x's scopes and variable names."""
import functools

from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.framework.variables import model_variable
from tensorweave.contrib.layers.initializers import xavier_initializer
from tensorweave.contrib.layers.layers import (_finish, _float_dtype, _weights,
                                               transposed_convolution)
from tensorweave.contrib.layers.utils import collect_named_outputs, scope_alias
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.layers.base import normalize_tuple
from tensorweave.ops import (array_ops, conv_ops, cumulative_ops, indexing_ops,
                             init_ops, linalg_ops, math_ops, nn_ops, reduction_ops,
                             slicing_ops, sort_ops, variable_scope)
from tensorweave.ops.nn_impl import embedding_lookup
from tensorweave.ops.pad_tile_ops import tile


@add_arg_scope
def convolution3d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                            data_format="NDHWC", activation_fn=nn_ops.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=xavier_initializer(),
                            weights_regularizer=None,
                            biases_initializer=init_ops.zeros_initializer(),
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """The transposed 3-D convolution with weights [kd, kh, kw, num_outputs, in_channels]."""
    with variable_scope.variable_scope(scope, "Conv3d_transpose", [inputs], reuse=reuse) as sc:
        return transposed_convolution(
            sc, 3, inputs, num_outputs, kernel_size, stride, padding, data_format,
            activation_fn, normalizer_fn, normalizer_params, weights_initializer,
            weights_regularizer, biases_initializer, biases_regularizer,
            variables_collections, outputs_collections, trainable)


conv3d_transpose = convolution3d_transpose


@add_arg_scope
def convolution2d_in_plane(inputs, kernel_size, stride=1, padding="SAME",
                           activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                           weights_initializer=xavier_initializer(), weights_regularizer=None,
                           biases_initializer=init_ops.zeros_initializer(),
                           biases_regularizer=None, reuse=None, variables_collections=None,
                           outputs_collections=None, trainable=True, scope=None):
    """One [kh, kw] kernel (weights [kh, kw, 1, 1]) applied to every channel on its own."""
    with variable_scope.variable_scope(scope, "ConvInPlane", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        channels = inputs.shape.as_tuple()[-1]
        kernel_h, kernel_w = normalize_tuple(kernel_size, 2, "kernel_size")
        stride_h, stride_w = normalize_tuple(stride, 2, "stride")
        dtype = _float_dtype(inputs)
        weights = _weights([kernel_h, kernel_w, 1, 1], dtype, weights_initializer,
                           weights_regularizer, variables_collections, trainable)
        depthwise = tile(weights, [1, 1, channels, 1])
        outputs = conv_ops.depthwise_conv2d(inputs, depthwise, [1, stride_h, stride_w, 1],
                                            padding.upper())
        return _finish(outputs, sc.name, channels, dtype, normalizer_fn, normalizer_params,
                       biases_initializer, biases_regularizer, variables_collections,
                       trainable, activation_fn, outputs_collections)


conv2d_in_plane = convolution2d_in_plane


def dense_to_sparse(tensor, eos_token=0, outputs_collections=None, scope=None):
    """The SparseTensor of the entries of `tensor` that are not `eos_token`."""
    with graph_lib.name_scope(scope or "dense_to_sparse") as name_scope:
        tensor = convert_to_tensor(tensor)
        keep = math_ops.not_equal(tensor, constant(eos_token, dtype=tensor.dtype))
        indices = math_ops.cast(math_ops.where(keep), dtypes.int64)
        result = SparseTensor(indices, indexing_ops.gather_nd(tensor, indices),
                              array_ops.shape(tensor, out_type=dtypes.int64))
        return collect_named_outputs(outputs_collections, scope_alias(name_scope), result)


def scale_gradient(inputs, gradient_multiplier):
    """`inputs` unchanged going forward; the gradient flowing back is multiplied by
    `gradient_multiplier`."""
    inputs = convert_to_tensor(inputs)
    frozen = array_ops.stop_gradient(inputs)
    return frozen + gradient_multiplier * (inputs - frozen)


def spatial_softmax(features, temperature=None, name=None, variables_collections=None,
                    trainable=True, data_format="NHWC"):
    """Expected image coordinates, in [-1, 1], of each channel's softmax over its positions
    (Levine et al.'s spatial soft arg-max): [batch, 2 * channels] as (row, column) pairs;
    the softmax temperature is a variable (initially 1, or `temperature`)."""
    with variable_scope.variable_scope(name, "spatial_softmax", [features]):
        features = convert_to_tensor(features)
        if data_format == "NCHW":
            _, channels, height, width = features.shape.as_tuple()
        else:
            _, height, width, channels = features.shape.as_tuple()
            features = array_ops.transpose(features, [0, 3, 1, 2])
        if None in (channels, height, width):
            raise ValueError(f"spatial_softmax: height, width and channels must be known, "
                             f"got shape {features.shape}")
        rows, cols = cumulative_ops.meshgrid(cumulative_ops.lin_space(-1.0, 1.0, height),
                                             cumulative_ops.lin_space(-1.0, 1.0, width),
                                             indexing="ij")
        rows, cols = (array_ops.reshape(rows, [height * width]),
                      array_ops.reshape(cols, [height * width]))
        scale = model_variable("temperature", shape=(), dtype=dtypes.float32,
                               initializer=init_ops.ones_initializer() if temperature is None
                               else init_ops.constant_initializer(temperature),
                               collections=variables_collections, trainable=trainable)
        attention = nn_ops.softmax(array_ops.reshape(features, [-1, height * width]) / scale)
        expected = slicing_ops.concat(
            [reduction_ops.reduce_sum(rows * attention, [1], keepdims=True),
             reduction_ops.reduce_sum(cols * attention, [1], keepdims=True)], 1)
        keypoints = array_ops.reshape(expected, [-1, channels * 2])
        keypoints.set_shape([None, channels * 2])
        return keypoints


def images_to_sequence(inputs, data_format="NHWC", outputs_collections=None, scope=None):
    """[batch, height, width, depth] -> [width, batch * height, depth]: each image row a
    sequence over its columns."""
    with graph_lib.name_scope(scope or "ImagesToSequence") as name_scope:
        inputs = convert_to_tensor(inputs)
        if data_format == "NCHW":
            inputs = array_ops.transpose(inputs, [0, 2, 3, 1])
        shape = array_ops.shape(inputs)
        batch, height, width, depth = (shape[0], shape[1], shape[2], shape[3])
        static = inputs.shape.as_tuple()
        outputs = array_ops.reshape(array_ops.transpose(inputs, [2, 0, 1, 3]),
                                    slicing_ops.stack([width, batch * height, depth]))
        if static[0] is not None and static[1] is not None:
            outputs.set_shape([static[2], static[0] * static[1], static[3]])
        return collect_named_outputs(outputs_collections, scope_alias(name_scope), outputs)


def sequence_to_images(inputs, height, output_data_format="channels_last",
                       outputs_collections=None, scope=None):
    """The inverse of images_to_sequence: [width, batch * height, depth] -> images."""
    with graph_lib.name_scope(scope or "SequenceToImages") as name_scope:
        inputs = convert_to_tensor(inputs)
        width, rows, depth = inputs.shape.as_tuple()
        shape = array_ops.shape(inputs)
        images = array_ops.reshape(inputs, slicing_ops.stack(
            [shape[0], shape[1] // height, height, shape[2]]))
        perm = [1, 3, 2, 0] if output_data_format == "channels_first" else [1, 2, 0, 3]
        outputs = array_ops.transpose(images, perm)
        if rows is not None:
            batch = rows // height
            outputs.set_shape([batch, depth, height, width] if perm[1] == 3
                              else [batch, height, width, depth])
        return collect_named_outputs(outputs_collections, scope_alias(name_scope), outputs)


def legacy_fully_connected(x, num_output_units, activation_fn=None,
                           weight_init=xavier_initializer(),
                           bias_init=init_ops.zeros_initializer(), name=None,
                           weight_collections=(GraphKeys.GLOBAL_VARIABLES,),
                           bias_collections=(GraphKeys.GLOBAL_VARIABLES,),
                           output_collections=(GraphKeys.ACTIVATIONS,), trainable=True,
                           weight_regularizer=None, bias_regularizer=None):
    """TF 0.x's fully connected layer: x @ weights + bias, then activation_fn; inputs of
    rank > 2 are multiplied along their last dimension."""
    with variable_scope.variable_scope(name, "fully_connected", [x]):
        x = convert_to_tensor(x)
        rank, width = x.shape.ndims, x.shape.as_tuple()[-1]
        if rank is None or rank < 2 or width is None:
            raise ValueError(f"legacy_fully_connected: x must have rank >= 2 and a known last "
                             f"dimension, got shape {x.shape}")
        weights = variable_scope.get_variable(
            "weights", [width, num_output_units], dtype=x.dtype, initializer=weight_init,
            collections=list(weight_collections), trainable=trainable,
            regularizer=weight_regularizer)
        flat = x if rank == 2 else array_ops.reshape(x, [-1, width])
        y = linalg_ops.matmul(flat, weights)
        if bias_init is not None:
            bias = variable_scope.get_variable(
                "bias", [num_output_units], dtype=x.dtype, initializer=bias_init,
                collections=list(bias_collections), trainable=trainable,
                regularizer=bias_regularizer)
            y = conv_ops.bias_add(y, bias)
        if rank > 2:
            y = array_ops.reshape(y, slicing_ops.concat(
                [array_ops.shape(x)[:-1], [num_output_units]], 0))
            y.set_shape(x.shape[:-1].concatenate([num_output_units]))
        if activation_fn is not None:
            y = activation_fn(y)
        for collection in output_collections or ():
            graph_lib.add_to_collection(collection, y)
        return y


legacy_linear = functools.partial(legacy_fully_connected, activation_fn=None)
legacy_relu = functools.partial(legacy_fully_connected, activation_fn=nn_ops.relu)


def embedding_lookup_unique(params, ids, partition_strategy="mod", name=None):
    """embedding_lookup that gathers each distinct id once (any shape of ids)."""
    with graph_lib.name_scope(name or "EmbeddingLookupUnique"):
        ids = convert_to_tensor(ids)
        flat = array_ops.reshape(ids, [-1])
        unique_ids, index = sort_ops.unique(flat)
        rows = embedding_lookup(params, unique_ids, partition_strategy=partition_strategy)
        gathered = slicing_ops.gather(rows, index)
        return array_ops.reshape(gathered, slicing_ops.concat(
            [array_ops.shape(ids), array_ops.shape(gathered)[1:]], 0))
