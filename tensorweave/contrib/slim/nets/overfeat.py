"""OverFeat (Sermanet et al., 2013), the "fast" model, as TF-Slim builds it: no dropout before
the convolutions, fully connected layers as convolutions (fc6 6x6 VALID on 231x231 inputs)."""
from tensorweave.contrib.slim.nets import _common as c


def overfeat_arg_scope(weight_decay=0.0005):
    return c.fc_conv_arg_scope(weight_decay, c.zeros_initializer())


def overfeat(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
             spatial_squeeze=True, scope="overfeat", global_pool=False):
    """Returns (net, end_points); net is the logits when num_classes is set."""
    with c.variable_scope(scope, "overfeat", [inputs]) as sc:
        collection = c.end_points_collection(sc)
        with c.arg_scope([c.conv2d, c.fully_connected, c.max_pool2d],
                         outputs_collections=collection):
            net = c.conv2d(inputs, 64, [11, 11], 4, padding="VALID", scope="conv1")
            net = c.max_pool2d(net, [2, 2], scope="pool1")
            net = c.conv2d(net, 256, [5, 5], padding="VALID", scope="conv2")
            net = c.max_pool2d(net, [2, 2], scope="pool2")
            net = c.conv2d(net, 512, [3, 3], scope="conv3")
            net = c.conv2d(net, 1024, [3, 3], scope="conv4")
            net = c.conv2d(net, 1024, [3, 3], scope="conv5")
            net = c.max_pool2d(net, [2, 2], scope="pool5")
            with c.arg_scope([c.conv2d], weights_initializer=c.trunc_normal(0.005),
                             biases_initializer=c.constant_initializer(0.1)):
                return c.conv_classifier(net, sc, collection, 3072, [6, 6], "VALID",
                                         num_classes, is_training, dropout_keep_prob,
                                         spatial_squeeze, global_pool, fc8_zero_bias=True)


overfeat.default_image_size = 231
