"""ResNet v1 (He et al., "Deep Residual Learning for Image Recognition", 2015) as TF-Slim
builds it: bottleneck units with the stride on the 3x3 convolution, batch norm after every
convolution, a 1x1 convolution as the logits layer; resnet_v1_{50,101,152,200}."""
import contextlib

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
        net, end_points = resnet_utils.body(
            inputs, blocks, bottleneck, sc, is_training, output_stride, include_root_block,
            store_non_strided_activations, contextlib.nullcontext)
        return resnet_utils.finish(net, end_points, sc, num_classes, global_pool,
                                   spatial_squeeze)


resnet_v1.default_image_size = 224


def resnet_v1_block(scope, base_depth, num_units, stride):
    """A block of `num_units` v1 bottlenecks of width base_depth, the last strided."""
    return resnet_utils.bottleneck_block(scope, bottleneck, base_depth, num_units, stride)


resnet_v1_50 = resnet_utils.named_resnet(resnet_v1, resnet_v1_block, (3, 4, 6, 3),
                                         "resnet_v1_50", "v1")
resnet_v1_101 = resnet_utils.named_resnet(resnet_v1, resnet_v1_block, (3, 4, 23, 3),
                                          "resnet_v1_101", "v1")
resnet_v1_152 = resnet_utils.named_resnet(resnet_v1, resnet_v1_block, (3, 8, 36, 3),
                                          "resnet_v1_152", "v1")
resnet_v1_200 = resnet_utils.named_resnet(resnet_v1, resnet_v1_block, (3, 24, 36, 3),
                                          "resnet_v1_200", "v1")
