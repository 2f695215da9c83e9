"""ResNet v1 (He et al., "Deep Residual Learning for Image Recognition", 2015) as TF-Slim
builds it: bottleneck units with the stride on the 3x3 convolution, batch norm after every
convolution, a 1x1 convolution as the logits layer; resnet_v1_{50,101,152,200}."""
from tensorweave.contrib.slim.nets import _common as c
from tensorweave.contrib.slim.nets import resnet_utils

resnet_arg_scope = resnet_utils.resnet_arg_scope


@c.add_arg_scope
def bottleneck(inputs, depth, depth_bottleneck, stride, rate=1, outputs_collections=None,
               scope=None, use_bounded_activations=False):
    """1x1 (depth_bottleneck) -> 3x3 (stride, rate) -> 1x1 (depth), plus the shortcut."""
    with c.variable_scope(scope, "bottleneck_v1", [inputs]) as sc:
        depth_in = inputs.shape.as_list()[-1]
        if depth == depth_in:
            shortcut = resnet_utils.subsample(inputs, stride, "shortcut")
        else:
            shortcut = c.conv2d(inputs, depth, [1, 1], stride=stride,
                                activation_fn=c.relu6 if use_bounded_activations else None,
                                scope="shortcut")
        residual = c.conv2d(inputs, depth_bottleneck, [1, 1], stride=1, scope="conv1")
        residual = resnet_utils.conv2d_same(residual, depth_bottleneck, 3, stride, rate=rate,
                                            scope="conv2")
        residual = c.conv2d(residual, depth, [1, 1], stride=1, activation_fn=None,
                            scope="conv3")
        if use_bounded_activations:
            residual = c.math_ops.clip_by_value(residual, -6.0, 6.0)
            output = c.relu6(shortcut + residual)
        else:
            output = c.nn_ops.relu(shortcut + residual)
        return c.collect_named_outputs(outputs_collections, sc.name, output)


def resnet_v1(inputs, blocks, num_classes=None, is_training=True, global_pool=True,
              output_stride=None, include_root_block=True, spatial_squeeze=True,
              store_non_strided_activations=False, reuse=None, scope=None):
    """The ResNet v1 body made of `blocks`, with its root (7x7/2 conv + 3x3/2 max pool) and
    head; returns (net, end_points)."""
    with c.variable_scope(scope, "resnet_v1", [inputs], reuse=reuse) as sc:
        collection = c.end_points_collection(sc)
        with c.arg_scope([c.conv2d, bottleneck, resnet_utils.stack_blocks_dense],
                         outputs_collections=collection):
            with resnet_utils.training_scope(is_training):
                net = inputs
                if include_root_block:
                    output_stride = resnet_utils.check_root_stride(output_stride)
                    net = resnet_utils.conv2d_same(net, 64, 7, stride=2, scope="conv1")
                    net = c.max_pool2d(net, [3, 3], stride=2, scope="pool1")
                net = resnet_utils.stack_blocks_dense(net, blocks, output_stride,
                                                      store_non_strided_activations)
                end_points = c.convert_collection_to_dict(collection)
                return resnet_utils.finish(net, end_points, sc, num_classes, global_pool,
                                           spatial_squeeze)


resnet_v1.default_image_size = 224


def resnet_v1_block(scope, base_depth, num_units, stride):
    """A block of `num_units` bottlenecks of width base_depth (output 4x), the last strided."""
    unit = {"depth": base_depth * 4, "depth_bottleneck": base_depth}
    return resnet_utils.Block(scope, bottleneck, [dict(unit, stride=1)] * (num_units - 1) +
                              [dict(unit, stride=stride)])


def _resnet(units, default_scope):
    def build(inputs, num_classes=None, is_training=True, global_pool=True, output_stride=None,
              spatial_squeeze=True, store_non_strided_activations=False, min_base_depth=8,
              depth_multiplier=1, reuse=None, scope=default_scope):
        def depth(d):
            return max(int(d * depth_multiplier), min_base_depth)
        blocks = [resnet_v1_block(f"block{i + 1}", depth(base), count, 2 if i < 3 else 1)
                  for i, (base, count) in enumerate(zip((64, 128, 256, 512), units))]
        return resnet_v1(inputs, blocks, num_classes, is_training, global_pool=global_pool,
                         output_stride=output_stride, include_root_block=True,
                         spatial_squeeze=spatial_squeeze,
                         store_non_strided_activations=store_non_strided_activations,
                         reuse=reuse, scope=scope)
    build.__name__ = build.__qualname__ = default_scope
    build.__doc__ = f"ResNet-{default_scope.rsplit('_', 1)[-1]} v1: blocks of {units} units."
    build.default_image_size = 224
    return build


resnet_v1_50 = _resnet((3, 4, 6, 3), "resnet_v1_50")
resnet_v1_101 = _resnet((3, 4, 23, 3), "resnet_v1_101")
resnet_v1_152 = _resnet((3, 8, 36, 3), "resnet_v1_152")
resnet_v1_200 = _resnet((3, 24, 36, 3), "resnet_v1_200")
