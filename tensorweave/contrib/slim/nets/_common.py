"""What the slim nets share: the layers and ops they are built from, and the end-points
collection of a net's variable scope (`<scope>_end_points`, as TF-Slim names it)."""
from tensorweave.contrib.framework.arg_scope import arg_scope, add_arg_scope  # noqa: F401
from tensorweave.contrib.layers.layers import (avg_pool2d, conv2d, dropout,  # noqa: F401
                                               fully_connected, max_pool2d, repeat, softmax)
from tensorweave.contrib.layers.normalization import batch_norm  # noqa: F401
from tensorweave.contrib.layers.regularizers import l2_regularizer  # noqa: F401
from tensorweave.contrib.layers.initializers import variance_scaling_initializer  # noqa: F401
from tensorweave.contrib.layers.utils import (collect_named_outputs,  # noqa: F401
                                              convert_collection_to_dict)
from tensorweave.framework.graph import GraphKeys  # noqa: F401
from tensorweave.ops import array_ops, math_ops, nn_ops  # noqa: F401
from tensorweave.ops.activation_ops import relu6  # noqa: F401
from tensorweave.ops.init_ops import (constant_initializer, truncated_normal_initializer,  # noqa: F401,E501
                                      zeros_initializer)
from tensorweave.ops.pad_tile_ops import pad  # noqa: F401
from tensorweave.ops.slicing_ops import concat  # noqa: F401
from tensorweave.ops.variable_scope import variable_scope  # noqa: F401


def trunc_normal(stddev):
    return truncated_normal_initializer(0.0, stddev)


def end_points_collection(scope):
    return scope.original_name_scope + "_end_points"


def global_average(net, name="global_pool"):
    return math_ops.reduce_mean(net, [1, 2], keepdims=True, name=name)


def squeeze_spatial(net, name):
    return array_ops.squeeze(net, [1, 2], name=name)


def conv_classifier(net, sc, collection, fc6_depth, fc6_kernel, fc6_padding, num_classes,
                    is_training, dropout_keep_prob, spatial_squeeze, global_pool,
                    fc8_zero_bias=False):
    """The head of the AlexNet / OverFeat / VGG family with its fully connected layers as
    convolutions: fc6 (fc6_kernel, fc6_padding), dropout6, fc7 (1x1, 4096); then a global
    pool if asked, and with num_classes dropout7 and the 1x1 logits fc8 (squeezed)."""
    net = conv2d(net, fc6_depth, fc6_kernel, padding=fc6_padding, scope="fc6")
    net = dropout(net, dropout_keep_prob, is_training=is_training, scope="dropout6")
    net = conv2d(net, 4096, [1, 1], scope="fc7")
    end_points = convert_collection_to_dict(collection)
    if global_pool:
        net = global_average(net)
        end_points["global_pool"] = net
    if num_classes:
        net = dropout(net, dropout_keep_prob, is_training=is_training, scope="dropout7")
        extra = {"biases_initializer": zeros_initializer()} if fc8_zero_bias else {}
        net = conv2d(net, num_classes, [1, 1], activation_fn=None, normalizer_fn=None,
                     scope="fc8", **extra)
        if spatial_squeeze:
            net = squeeze_spatial(net, "fc8/squeezed")
        end_points[sc.name + "/fc8"] = net
    return net, end_points


def fc_conv_arg_scope(weight_decay, biases_initializer):
    """The arg_scope of AlexNet and OverFeat: relu, L2 weight decay, SAME convolutions and
    VALID max pooling."""
    with arg_scope([conv2d, fully_connected], activation_fn=nn_ops.relu,
                   biases_initializer=biases_initializer,
                   weights_regularizer=l2_regularizer(weight_decay)):
        with arg_scope([conv2d], padding="SAME"):
            with arg_scope([max_pool2d], padding="VALID") as arg_sc:
                return arg_sc
