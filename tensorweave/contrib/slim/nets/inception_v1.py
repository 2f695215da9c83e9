"""Inception v1 / GoogLeNet (Szegedy et al., "Going Deeper with Convolutions", 2014) as
TF-Slim builds it, with batch norm (from inception_arg_scope) and TF-Slim's variable names
(InceptionV1/Mixed_3b/Branch_1/Conv2d_0b_3x3/weights ...)."""
from tensorweave.contrib.slim.nets import _common as c

# (Branch_0 1x1, Branch_1 1x1 -> 3x3, Branch_2 1x1 -> 3x3, Branch_3 pool -> 1x1) depths.
_MIXED = {
    "Mixed_3b": (64, 96, 128, 16, 32, 32), "Mixed_3c": (128, 128, 192, 32, 96, 64),
    "Mixed_4b": (192, 96, 208, 16, 48, 64), "Mixed_4c": (160, 112, 224, 24, 64, 64),
    "Mixed_4d": (128, 128, 256, 24, 64, 64), "Mixed_4e": (112, 144, 288, 32, 64, 64),
    "Mixed_4f": (256, 160, 320, 32, 128, 128), "Mixed_5b": (256, 160, 320, 32, 128, 128),
    "Mixed_5c": (384, 192, 384, 48, 128, 128),
}
_ORDER = ["Conv2d_1a_7x7", "MaxPool_2a_3x3", "Conv2d_2b_1x1", "Conv2d_2c_3x3",
          "MaxPool_3a_3x3", "Mixed_3b", "Mixed_3c", "MaxPool_4a_3x3", "Mixed_4b", "Mixed_4c",
          "Mixed_4d", "Mixed_4e", "Mixed_4f", "MaxPool_5a_2x2", "Mixed_5b", "Mixed_5c"]


def inception_arg_scope(weight_decay=0.00004, use_batch_norm=True, batch_norm_decay=0.9997,
                        batch_norm_epsilon=0.001, activation_fn=c.nn_ops.relu,
                        batch_norm_updates_collections=c.GraphKeys.UPDATE_OPS,
                        batch_norm_scale=False):
    """L2 weight decay, He initialisation and batch norm after each convolution."""
    params = {"decay": batch_norm_decay, "epsilon": batch_norm_epsilon,
              "updates_collections": batch_norm_updates_collections, "fused": None,
              "scale": batch_norm_scale}
    with c.arg_scope([c.conv2d], weights_regularizer=c.l2_regularizer(weight_decay)):
        with c.arg_scope([c.conv2d], weights_initializer=c.variance_scaling_initializer(),
                         activation_fn=activation_fn,
                         normalizer_fn=c.batch_norm if use_batch_norm else None,
                         normalizer_params=params if use_batch_norm else None) as sc:
            return sc


inception_v1_arg_scope = inception_arg_scope


def _mixed(net, name, depths):
    b0, b1a, b1b, b2a, b2b, b3 = depths
    with c.variable_scope(name):
        with c.variable_scope("Branch_0"):
            branch_0 = c.conv2d(net, b0, [1, 1], scope="Conv2d_0a_1x1")
        with c.variable_scope("Branch_1"):
            branch_1 = c.conv2d(net, b1a, [1, 1], scope="Conv2d_0a_1x1")
            branch_1 = c.conv2d(branch_1, b1b, [3, 3], scope="Conv2d_0b_3x3")
        with c.variable_scope("Branch_2"):
            branch_2 = c.conv2d(net, b2a, [1, 1], scope="Conv2d_0a_1x1")
            # TF-Slim names this one Conv2d_0a_3x3 in Mixed_5b (checkpoints depend on it).
            branch_2 = c.conv2d(branch_2, b2b, [3, 3], scope="Conv2d_0a_3x3"
                                if name == "Mixed_5b" else "Conv2d_0b_3x3")
        with c.variable_scope("Branch_3"):
            branch_3 = c.max_pool2d(net, [3, 3], scope="MaxPool_0a_3x3")
            branch_3 = c.conv2d(branch_3, b3, [1, 1], scope="Conv2d_0b_1x1")
        return c.concat([branch_0, branch_1, branch_2, branch_3], 3)


def inception_v1_base(inputs, final_endpoint="Mixed_5c", include_root_block=True,
                      scope="InceptionV1"):
    """The convolutional part up to `final_endpoint`; returns (net, end_points)."""
    if final_endpoint not in _ORDER:
        raise ValueError(f"Unknown final endpoint {final_endpoint}")
    end_points = {}
    with c.variable_scope(scope, "InceptionV1", [inputs]):
        with c.arg_scope([c.conv2d, c.fully_connected], weights_initializer=c.trunc_normal(0.01)):
            with c.arg_scope([c.conv2d, c.max_pool2d], stride=1, padding="SAME"):
                net = inputs
                for name in _ORDER if include_root_block else _ORDER[5:]:
                    if name in _MIXED:
                        net = _mixed(net, name, _MIXED[name])
                    elif name == "Conv2d_1a_7x7":
                        net = c.conv2d(net, 64, [7, 7], stride=2, scope=name)
                    elif name == "Conv2d_2b_1x1":
                        net = c.conv2d(net, 64, [1, 1], scope=name)
                    elif name == "Conv2d_2c_3x3":
                        net = c.conv2d(net, 192, [3, 3], scope=name)
                    elif name == "MaxPool_5a_2x2":
                        net = c.max_pool2d(net, [2, 2], stride=2, scope=name)
                    else:
                        net = c.max_pool2d(net, [3, 3], stride=2, scope=name)
                    end_points[name] = net
                    if name == final_endpoint:
                        return net, end_points
    raise ValueError(f"Unknown final endpoint {final_endpoint}")


def inception_v1(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.8,
                 prediction_fn=c.softmax, spatial_squeeze=True, reuse=None,
                 scope="InceptionV1", global_pool=False):
    """Inception v1 with its classifier: 7x7 average pool (or a global one), dropout, 1x1
    logits; returns (logits, end_points)."""
    with c.variable_scope(scope, "InceptionV1", [inputs], reuse=reuse) as sc:
        with c.arg_scope([c.batch_norm, c.dropout], is_training=is_training):
            net, end_points = inception_v1_base(inputs, scope=sc)
            with c.variable_scope("Logits"):
                if global_pool:
                    net = c.global_average(net)
                    end_points["global_pool"] = net
                else:
                    net = c.avg_pool2d(net, [7, 7], stride=1, scope="AvgPool_0a_7x7")
                    end_points["AvgPool_0a_7x7"] = net
                if not num_classes:
                    return net, end_points
                net = c.dropout(net, dropout_keep_prob, scope="Dropout_0b")
                logits = c.conv2d(net, num_classes, [1, 1], activation_fn=None,
                                  normalizer_fn=None, scope="Conv2d_0c_1x1")
                if spatial_squeeze:
                    logits = c.squeeze_spatial(logits, "SpatialSqueeze")
                end_points["Logits"] = logits
                end_points["Predictions"] = prediction_fn(logits, scope="Predictions")
    return logits, end_points


inception_v1.default_image_size = 224
