"""AlexNet version 2 ("One weird trick for parallelizing convolutional neural networks",
Krizhevsky 2014), as TF-Slim builds it: no local response normalisation, fully connected
layers as convolutions (fc6 5x5 VALID on 224x224 inputs)."""
from tensorweave.contrib.slim.nets import _common as c


def alexnet_v2_arg_scope(weight_decay=0.0005):
    return c.fc_conv_arg_scope(weight_decay, c.constant_initializer(0.1))


def alexnet_v2(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
               spatial_squeeze=True, scope="alexnet_v2", global_pool=False):
    """Returns (net, end_points); net is the logits when num_classes is set."""
    with c.variable_scope(scope, "alexnet_v2", [inputs]) as sc:
        collection = c.end_points_collection(sc)
        with c.arg_scope([c.conv2d, c.fully_connected, c.max_pool2d],
                         outputs_collections=[collection]):
            net = c.conv2d(inputs, 64, [11, 11], 4, padding="VALID", scope="conv1")
            net = c.max_pool2d(net, [3, 3], 2, scope="pool1")
            net = c.conv2d(net, 192, [5, 5], scope="conv2")
            net = c.max_pool2d(net, [3, 3], 2, scope="pool2")
            net = c.conv2d(net, 384, [3, 3], scope="conv3")
            net = c.conv2d(net, 384, [3, 3], scope="conv4")
            net = c.conv2d(net, 256, [3, 3], scope="conv5")
            net = c.max_pool2d(net, [3, 3], 2, scope="pool5")
            with c.arg_scope([c.conv2d], weights_initializer=c.trunc_normal(0.005),
                             biases_initializer=c.constant_initializer(0.1)):
                return c.conv_classifier(net, sc, collection, 4096, [5, 5], "VALID",
                                         num_classes, is_training, dropout_keep_prob,
                                         spatial_squeeze, global_pool, fc8_zero_bias=True)


alexnet_v2.default_image_size = 224
