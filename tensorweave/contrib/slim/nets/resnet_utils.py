"""What ResNet v1 and v2 share (He et al., "Deep Residual Learning" and "Identity Mappings in
Deep Residual Networks"), as TF-Slim has it: a net is a list of Blocks of units; dense
prediction ('atrous' ResNets) trades the last strides for dilation up to `output_stride`."""
import collections
import contextlib

from tensorweave.contrib.slim.nets import _common as c


class Block(collections.namedtuple("Block", ["scope", "unit_fn", "args"])):
    """A block of units: variable scope name, the unit function, and one dict of keyword
    arguments (depth, depth_bottleneck, stride) per unit."""


def subsample(inputs, factor, scope=None):
    """Every `factor`-th row and column (a 1x1 max pool with that stride); `inputs` if 1."""
    if factor == 1:
        return inputs
    return c.max_pool2d(inputs, [1, 1], stride=factor, scope=scope)


def conv2d_same(inputs, num_outputs, kernel_size, stride, rate=1, scope=None):
    """A stride-`stride` convolution whose output does not depend on the input's size parity:
    explicit zero padding of the (dilated) kernel's extent, then a VALID convolution."""
    if stride == 1:
        return c.conv2d(inputs, num_outputs, kernel_size, stride=1, rate=rate, padding="SAME",
                        scope=scope)
    effective = kernel_size + (kernel_size - 1) * (rate - 1)
    total = effective - 1
    begin = total // 2
    inputs = c.pad(inputs, [[0, 0], [begin, total - begin], [begin, total - begin], [0, 0]])
    return c.conv2d(inputs, num_outputs, kernel_size, stride=stride, rate=rate,
                    padding="VALID", scope=scope)


@c.add_arg_scope
def stack_blocks_dense(net, blocks, output_stride=None, store_non_strided_activations=False,
                       outputs_collections=None):
    """Applies the blocks' units in turn. With `output_stride`, once the product of the
    strides so far reaches it, later strides become dilation rates instead (so the output is
    at most `output_stride` times smaller than the input); a stride it cannot meet exactly is
    a ValueError."""
    current_stride, rate = 1, 1
    for block in blocks:
        with c.variable_scope(block.scope, "block", [net]) as sc:
            block_stride = 1
            for i, unit in enumerate(block.args):
                if store_non_strided_activations and i == len(block.args) - 1:
                    block_stride = unit.get("stride", 1)
                    unit = dict(unit, stride=1)
                with c.variable_scope(f"unit_{i + 1}", values=[net]):
                    if output_stride is not None and current_stride == output_stride:
                        net = block.unit_fn(net, rate=rate, **dict(unit, stride=1))
                        rate *= unit.get("stride", 1)
                    else:
                        net = block.unit_fn(net, rate=1, **unit)
                        current_stride *= unit.get("stride", 1)
                        if output_stride is not None and current_stride > output_stride:
                            raise ValueError("The target output_stride cannot be reached.")
            net = c.collect_named_outputs(outputs_collections, sc.name, net)
            if output_stride is not None and current_stride == output_stride:
                rate *= block_stride
            else:
                net = subsample(net, block_stride)
                current_stride *= block_stride
                if output_stride is not None and current_stride > output_stride:
                    raise ValueError("The target output_stride cannot be reached.")
    if output_stride is not None and current_stride != output_stride:
        raise ValueError("The target output_stride cannot be reached.")
    return net


def resnet_arg_scope(weight_decay=0.0001, batch_norm_decay=0.997, batch_norm_epsilon=1e-5,
                     batch_norm_scale=True, activation_fn=c.nn_ops.relu, use_batch_norm=True,
                     batch_norm_updates_collections=c.GraphKeys.UPDATE_OPS):
    """The arg_scope ResNets are trained with: L2 weight decay, He initialisation, batch
    norm after every convolution, SAME max pooling."""
    params = {"decay": batch_norm_decay, "epsilon": batch_norm_epsilon,
              "scale": batch_norm_scale, "updates_collections": batch_norm_updates_collections,
              "fused": None}
    with c.arg_scope([c.conv2d], weights_regularizer=c.l2_regularizer(weight_decay),
                     weights_initializer=c.variance_scaling_initializer(),
                     activation_fn=activation_fn,
                     normalizer_fn=c.batch_norm if use_batch_norm else None,
                     normalizer_params=params):
        with c.arg_scope([c.batch_norm], **params):
            with c.arg_scope([c.max_pool2d], padding="SAME") as arg_sc:
                return arg_sc


def training_scope(is_training):
    """arg_scope setting batch norm's is_training, or nothing when it is None."""
    if is_training is None:
        return contextlib.nullcontext()
    return c.arg_scope([c.batch_norm], is_training=is_training)


def check_root_stride(output_stride):
    """The output_stride left for the blocks after the root's stride-4 conv1 + pool1."""
    if output_stride is None:
        return None
    if output_stride % 4 != 0:
        raise ValueError("The output_stride needs to be a multiple of 4.")
    return output_stride // 4


def finish(net, end_points, sc, num_classes, global_pool, spatial_squeeze):
    """The head both versions share: global average pool, 1x1 logits, squeeze, softmax."""
    if global_pool:
        net = c.math_ops.reduce_mean(net, [1, 2], name="pool5", keepdims=True)
        end_points["global_pool"] = net
    if num_classes:
        net = c.conv2d(net, num_classes, [1, 1], activation_fn=None, normalizer_fn=None,
                       scope="logits")
        end_points[sc.name + "/logits"] = net
        if spatial_squeeze:
            net = c.squeeze_spatial(net, "SpatialSqueeze")
            end_points[sc.name + "/spatial_squeeze"] = net
        end_points["predictions"] = c.softmax(net, scope="predictions")
    return net, end_points


def bottleneck_block(scope, unit_fn, base_depth, num_units, stride):
    """A block of `num_units` bottleneck units of width base_depth (output 4x base_depth),
    the last one strided."""
    unit = {"depth": base_depth * 4, "depth_bottleneck": base_depth}
    return Block(scope, unit_fn, [dict(unit, stride=1)] * (num_units - 1) +
                 [dict(unit, stride=stride)])


def body(inputs, blocks, unit_fn, sc, is_training, output_stride, include_root_block,
         store_non_strided_activations, root_scope, after_blocks=None):
    """What ResNet v1 and v2 share between their scopes: end points collected, the root
    (7x7/2 conv under `root_scope`'s arg_scope, 3x3/2 max pool), the blocks, an optional
    `after_blocks(net)`; returns (net, end_points) before the head."""
    collection = c.end_points_collection(sc)
    with c.arg_scope([c.conv2d, unit_fn, stack_blocks_dense], outputs_collections=collection):
        with training_scope(is_training):
            net = inputs
            if include_root_block:
                output_stride = check_root_stride(output_stride)
                with root_scope():
                    net = conv2d_same(net, 64, 7, stride=2, scope="conv1")
                net = c.max_pool2d(net, [3, 3], stride=2, scope="pool1")
            net = stack_blocks_dense(net, blocks, output_stride, store_non_strided_activations)
            if after_blocks is not None:
                net = after_blocks(net)
            return net, c.convert_collection_to_dict(collection)


def named_resnet(build, block_fn, units, default_scope, version):
    """resnet_vN_{depth}: the four standard blocks of `units` units through `build`."""
    def resnet(inputs, num_classes=None, is_training=True, global_pool=True, output_stride=None,
               spatial_squeeze=True, store_non_strided_activations=False, min_base_depth=8,
               depth_multiplier=1, reuse=None, scope=default_scope):
        def depth(d):
            return max(int(d * depth_multiplier), min_base_depth)
        blocks = [block_fn(f"block{i + 1}", depth(base), count, 2 if i < 3 else 1)
                  for i, (base, count) in enumerate(zip((64, 128, 256, 512), units))]
        return build(inputs, blocks, num_classes, is_training, global_pool=global_pool,
                     output_stride=output_stride, include_root_block=True,
                     spatial_squeeze=spatial_squeeze,
                     store_non_strided_activations=store_non_strided_activations,
                     reuse=reuse, scope=scope)
    resnet.__name__ = resnet.__qualname__ = default_scope
    resnet.__doc__ = (f"ResNet-{default_scope.rsplit('_', 1)[-1]} {version}: blocks of "
                      f"{units} units.")
    resnet.default_image_size = 224
    return resnet
