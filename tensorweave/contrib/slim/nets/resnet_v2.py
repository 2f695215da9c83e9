"""ResNet v2 (He et al., "Identity Mappings in Deep Residual Networks", 2016) as TF-Slim
builds it: pre-activation bottleneck units (batch norm + relu before each convolution), a
root conv without batch norm, and a final batch norm ('postnorm'); resnet_v2_{50,...,200}."""
from tensorweave.contrib.slim.nets import _common as c
from tensorweave.contrib.slim.nets import resnet_utils

resnet_arg_scope = resnet_utils.resnet_arg_scope


@c.add_arg_scope
def bottleneck(inputs, depth, depth_bottleneck, stride, rate=1, outputs_collections=None,
               scope=None):
    """preact -> 1x1 -> 3x3 (stride, rate) -> 1x1 (depth, no norm), plus the shortcut."""
    with c.variable_scope(scope, "bottleneck_v2", [inputs]) as sc:
        depth_in = inputs.shape.as_list()[-1]
        preact = c.batch_norm(inputs, activation_fn=c.nn_ops.relu, scope="preact")
        if depth == depth_in:
            shortcut = resnet_utils.subsample(inputs, stride, "shortcut")
        else:
            shortcut = c.conv2d(preact, depth, [1, 1], stride=stride, normalizer_fn=None,
                                activation_fn=None, scope="shortcut")
        residual = c.conv2d(preact, depth_bottleneck, [1, 1], stride=1, scope="conv1")
        residual = resnet_utils.conv2d_same(residual, depth_bottleneck, 3, stride, rate=rate,
                                            scope="conv2")
        residual = c.conv2d(residual, depth, [1, 1], stride=1, normalizer_fn=None,
                            activation_fn=None, scope="conv3")
        return c.collect_named_outputs(outputs_collections, sc.name, shortcut + residual)


def resnet_v2(inputs, blocks, num_classes=None, is_training=True, global_pool=True,
              output_stride=None, include_root_block=True, spatial_squeeze=True, reuse=None,
              scope=None):
    """The ResNet v2 body made of `blocks`, with its root and head; returns (net, end_points)."""
    with c.variable_scope(scope, "resnet_v2", [inputs], reuse=reuse) as sc:
        collection = c.end_points_collection(sc)
        with c.arg_scope([c.conv2d, bottleneck, resnet_utils.stack_blocks_dense],
                         outputs_collections=collection):
            with resnet_utils.training_scope(is_training):
                net = inputs
                if include_root_block:
                    output_stride = resnet_utils.check_root_stride(output_stride)
                    with c.arg_scope([c.conv2d], activation_fn=None, normalizer_fn=None):
                        net = resnet_utils.conv2d_same(net, 64, 7, stride=2, scope="conv1")
                    net = c.max_pool2d(net, [3, 3], stride=2, scope="pool1")
                net = resnet_utils.stack_blocks_dense(net, blocks, output_stride)
                net = c.batch_norm(net, activation_fn=c.nn_ops.relu, scope="postnorm")
                end_points = c.convert_collection_to_dict(collection)
                return resnet_utils.finish(net, end_points, sc, num_classes, global_pool,
                                           spatial_squeeze)


resnet_v2.default_image_size = 224


def resnet_v2_block(scope, base_depth, num_units, stride):
    """A block of `num_units` bottlenecks of width base_depth (output 4x), the last strided."""
    unit = {"depth": base_depth * 4, "depth_bottleneck": base_depth}
    return resnet_utils.Block(scope, bottleneck, [dict(unit, stride=1)] * (num_units - 1) +
                              [dict(unit, stride=stride)])


def _resnet(units, default_scope):
    def build(inputs, num_classes=None, is_training=True, global_pool=True, output_stride=None,
              spatial_squeeze=True, reuse=None, scope=default_scope):
        blocks = [resnet_v2_block(f"block{i + 1}", base, count, 2 if i < 3 else 1)
                  for i, (base, count) in enumerate(zip((64, 128, 256, 512), units))]
        return resnet_v2(inputs, blocks, num_classes, is_training, global_pool=global_pool,
                         output_stride=output_stride, include_root_block=True,
                         spatial_squeeze=spatial_squeeze, reuse=reuse, scope=scope)
    build.__name__ = build.__qualname__ = default_scope
    build.__doc__ = f"ResNet-{default_scope.rsplit('_', 1)[-1]} v2: blocks of {units} units."
    build.default_image_size = 224
    return build


resnet_v2_50 = _resnet((3, 4, 6, 3), "resnet_v2_50")
resnet_v2_101 = _resnet((3, 4, 23, 3), "resnet_v2_101")
resnet_v2_152 = _resnet((3, 8, 36, 3), "resnet_v2_152")
resnet_v2_200 = _resnet((3, 24, 36, 3), "resnet_v2_200")
