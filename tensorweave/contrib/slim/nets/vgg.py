"""VGG (Simonyan & Zisserman, "Very Deep Convolutional Networks for Large-Scale Image
Recognition"), configurations A, D (vgg_16) and E (vgg_19), as TF-Slim builds them: the fully
connected layers are convolutions (fc6 7x7, fc7 and fc8 1x1), so the net also runs on larger
images; variable names match TF-Slim's checkpoints (vgg_16/conv1/conv1_1/weights ...)."""
from tensorweave.contrib.slim.nets import _common as c


def vgg_arg_scope(weight_decay=0.0005):
    with c.arg_scope([c.conv2d, c.fully_connected], activation_fn=c.nn_ops.relu,
                     weights_regularizer=c.l2_regularizer(weight_decay),
                     biases_initializer=c.zeros_initializer()):
        with c.arg_scope([c.conv2d], padding="SAME") as arg_sc:
            return arg_sc


def _vgg(layers_per_block, inputs, num_classes, is_training, dropout_keep_prob,
         spatial_squeeze, reuse, scope, default, fc_conv_padding, global_pool):
    with c.variable_scope(scope, default, [inputs], reuse=reuse) as sc:
        collection = c.end_points_collection(sc)
        with c.arg_scope([c.conv2d, c.fully_connected, c.max_pool2d],
                         outputs_collections=collection):
            net = inputs
            for block, (count, depth) in enumerate(zip(layers_per_block,
                                                       (64, 128, 256, 512, 512)), start=1):
                net = c.repeat(net, count, c.conv2d, depth, [3, 3], scope=f"conv{block}")
                net = c.max_pool2d(net, [2, 2], scope=f"pool{block}")
            return c.conv_classifier(net, sc, collection, 4096, [7, 7], fc_conv_padding,
                                     num_classes, is_training, dropout_keep_prob,
                                     spatial_squeeze, global_pool)


def vgg_a(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
          spatial_squeeze=True, reuse=None, scope="vgg_a", fc_conv_padding="VALID",
          global_pool=False):
    """VGG configuration A (11 layers); returns (net, end_points)."""
    return _vgg((1, 1, 2, 2, 2), inputs, num_classes, is_training, dropout_keep_prob,
                spatial_squeeze, reuse, scope, "vgg_a", fc_conv_padding, global_pool)


def vgg_16(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
           spatial_squeeze=True, reuse=None, scope="vgg_16", fc_conv_padding="VALID",
           global_pool=False):
    """VGG configuration D (16 layers); returns (net, end_points)."""
    return _vgg((2, 2, 3, 3, 3), inputs, num_classes, is_training, dropout_keep_prob,
                spatial_squeeze, reuse, scope, "vgg_16", fc_conv_padding, global_pool)


def vgg_19(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
           spatial_squeeze=True, reuse=None, scope="vgg_19", fc_conv_padding="VALID",
           global_pool=False):
    """VGG configuration E (19 layers); returns (net, end_points)."""
    return _vgg((2, 2, 4, 4, 4), inputs, num_classes, is_training, dropout_keep_prob,
                spatial_squeeze, reuse, scope, "vgg_19", fc_conv_padding, global_pool)


vgg_a.default_image_size = vgg_16.default_image_size = vgg_19.default_image_size = 224
vgg_d, vgg_e = vgg_16, vgg_19
