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
              output_stride=None, include_root_block=True, spatial_squeeze=True,
              store_non_strided_activations=False, reuse=None, scope=None):
    """The ResNet v2 body made of `blocks`: a root convolution without batch norm, the
    pre-activation units, a final batch norm + relu ('postnorm'), the head; returns
    (net, end_points)."""
    with c.variable_scope(scope, "resnet_v2", [inputs], reuse=reuse) as sc:
        net, end_points = resnet_utils.body(
            inputs, blocks, bottleneck, sc, is_training, output_stride, include_root_block,
            store_non_strided_activations,
            lambda: c.arg_scope([c.conv2d], activation_fn=None, normalizer_fn=None),
            lambda net: c.batch_norm(net, activation_fn=c.nn_ops.relu, scope="postnorm"))
        return resnet_utils.finish(net, end_points, sc, num_classes, global_pool,
                                   spatial_squeeze)


resnet_v2.default_image_size = 224


def resnet_v2_block(scope, base_depth, num_units, stride):
    """A block of `num_units` v2 bottlenecks of width base_depth, the last strided."""
    return resnet_utils.bottleneck_block(scope, bottleneck, base_depth, num_units, stride)


resnet_v2_50 = resnet_utils.named_resnet(resnet_v2, resnet_v2_block, (3, 4, 6, 3),
                                         "resnet_v2_50", "v2")
resnet_v2_101 = resnet_utils.named_resnet(resnet_v2, resnet_v2_block, (3, 4, 23, 3),
                                          "resnet_v2_101", "v2")
resnet_v2_152 = resnet_utils.named_resnet(resnet_v2, resnet_v2_block, (3, 8, 36, 3),
                                          "resnet_v2_152", "v2")
resnet_v2_200 = resnet_utils.named_resnet(resnet_v2, resnet_v2_block, (3, 24, 36, 3),
                                          "resnet_v2_200", "v2")
