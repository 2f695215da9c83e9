"""Inception v3 (Szegedy et al., "Rethinking the Inception Architecture for Computer Vision",
2015) as TF-Slim builds it, TF-Slim's variable names included (their irregular ones too, e.g.
Mixed_5c/Branch_1/Conv_1_0c_5x5, which checkpoints depend on), with the auxiliary head and
`depth_multiplier` / `min_depth` thinning."""
from tensorweave.contrib.slim.nets import _common as c
from tensorweave.contrib.slim.nets.inception_v1 import inception_arg_scope

inception_v3_arg_scope = inception_arg_scope

_ORDER = ["Conv2d_1a_3x3", "Conv2d_2a_3x3", "Conv2d_2b_3x3", "MaxPool_3a_3x3",
          "Conv2d_3b_1x1", "Conv2d_4a_3x3", "MaxPool_5a_3x3", "Mixed_5b", "Mixed_5c",
          "Mixed_5d", "Mixed_6a", "Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e", "Mixed_7a",
          "Mixed_7b", "Mixed_7c"]


def _reduced_kernel_size_for_small_input(tensor, kernel_size):
    shape = tensor.shape.as_list()
    if shape[1] is None or shape[2] is None:
        return list(kernel_size)
    return [min(shape[1], kernel_size[0]), min(shape[2], kernel_size[1])]


class _Builder:
    def __init__(self, depth_multiplier, min_depth):
        self.depth = lambda d: max(int(d * depth_multiplier), min_depth)

    def conv(self, net, depth, kernel, scope, **kwargs):
        return c.conv2d(net, self.depth(depth), kernel, scope=scope, **kwargs)

    def stem(self, net, name):
        conv, pool = self.conv, c.max_pool2d
        return {"Conv2d_1a_3x3": lambda: conv(net, 32, [3, 3], name, stride=2),
                "Conv2d_2a_3x3": lambda: conv(net, 32, [3, 3], name),
                "Conv2d_2b_3x3": lambda: conv(net, 64, [3, 3], name, padding="SAME"),
                "MaxPool_3a_3x3": lambda: pool(net, [3, 3], stride=2, scope=name),
                "Conv2d_3b_1x1": lambda: conv(net, 80, [1, 1], name),
                "Conv2d_4a_3x3": lambda: conv(net, 192, [3, 3], name),
                "MaxPool_5a_3x3": lambda: pool(net, [3, 3], stride=2, scope=name)}[name]()

    def mixed_5(self, net, name):
        """35x35 blocks: 1x1 | 1x1 -> 5x5 | 1x1 -> 3x3 -> 3x3 | avg pool -> 1x1."""
        conv = self.conv
        with c.variable_scope("Branch_0"):
            b0 = conv(net, 64, [1, 1], "Conv2d_0a_1x1")
        with c.variable_scope("Branch_1"):
            if name == "Mixed_5c":
                b1 = conv(net, 48, [1, 1], "Conv2d_0b_1x1")
                b1 = conv(b1, 64, [5, 5], "Conv_1_0c_5x5")
            else:
                b1 = conv(net, 48, [1, 1], "Conv2d_0a_1x1")
                b1 = conv(b1, 64, [5, 5], "Conv2d_0b_5x5")
        with c.variable_scope("Branch_2"):
            b2 = conv(net, 64, [1, 1], "Conv2d_0a_1x1")
            b2 = conv(b2, 96, [3, 3], "Conv2d_0b_3x3")
            b2 = conv(b2, 96, [3, 3], "Conv2d_0c_3x3")
        with c.variable_scope("Branch_3"):
            b3 = c.avg_pool2d(net, [3, 3], scope="AvgPool_0a_3x3")
            b3 = conv(b3, 32 if name == "Mixed_5b" else 64, [1, 1], "Conv2d_0b_1x1")
        return [b0, b1, b2, b3]

    def mixed_6a(self, net):
        conv = self.conv
        with c.variable_scope("Branch_0"):
            b0 = conv(net, 384, [3, 3], "Conv2d_1a_1x1", stride=2, padding="VALID")
        with c.variable_scope("Branch_1"):
            b1 = conv(net, 64, [1, 1], "Conv2d_0a_1x1")
            b1 = conv(b1, 96, [3, 3], "Conv2d_0b_3x3")
            b1 = conv(b1, 96, [3, 3], "Conv2d_1a_1x1", stride=2, padding="VALID")
        with c.variable_scope("Branch_2"):
            b2 = c.max_pool2d(net, [3, 3], stride=2, padding="VALID", scope="MaxPool_1a_3x3")
        return [b0, b1, b2]

    def mixed_6(self, net, width):
        """17x17 blocks with factorised 7x7 convolutions (1x7 and 7x1) of `width` channels."""
        conv = self.conv
        with c.variable_scope("Branch_0"):
            b0 = conv(net, 192, [1, 1], "Conv2d_0a_1x1")
        with c.variable_scope("Branch_1"):
            b1 = conv(net, width, [1, 1], "Conv2d_0a_1x1")
            b1 = conv(b1, width, [1, 7], "Conv2d_0b_1x7")
            b1 = conv(b1, 192, [7, 1], "Conv2d_0c_7x1")
        with c.variable_scope("Branch_2"):
            b2 = conv(net, width, [1, 1], "Conv2d_0a_1x1")
            b2 = conv(b2, width, [7, 1], "Conv2d_0b_7x1")
            b2 = conv(b2, width, [1, 7], "Conv2d_0c_1x7")
            b2 = conv(b2, width, [7, 1], "Conv2d_0d_7x1")
            b2 = conv(b2, 192, [1, 7], "Conv2d_0e_1x7")
        with c.variable_scope("Branch_3"):
            b3 = c.avg_pool2d(net, [3, 3], scope="AvgPool_0a_3x3")
            b3 = conv(b3, 192, [1, 1], "Conv2d_0b_1x1")
        return [b0, b1, b2, b3]

    def mixed_7a(self, net):
        conv = self.conv
        with c.variable_scope("Branch_0"):
            b0 = conv(net, 192, [1, 1], "Conv2d_0a_1x1")
            b0 = conv(b0, 320, [3, 3], "Conv2d_1a_3x3", stride=2, padding="VALID")
        with c.variable_scope("Branch_1"):
            b1 = conv(net, 192, [1, 1], "Conv2d_0a_1x1")
            b1 = conv(b1, 192, [1, 7], "Conv2d_0b_1x7")
            b1 = conv(b1, 192, [7, 1], "Conv2d_0c_7x1")
            b1 = conv(b1, 192, [3, 3], "Conv2d_1a_3x3", stride=2, padding="VALID")
        with c.variable_scope("Branch_2"):
            b2 = c.max_pool2d(net, [3, 3], stride=2, padding="VALID", scope="MaxPool_1a_3x3")
        return [b0, b1, b2]

    def mixed_7(self, net, name):
        """8x8 blocks with the 3x3 convolutions split into parallel 1x3 and 3x1."""
        conv = self.conv
        with c.variable_scope("Branch_0"):
            b0 = conv(net, 320, [1, 1], "Conv2d_0a_1x1")
        with c.variable_scope("Branch_1"):
            b1 = conv(net, 384, [1, 1], "Conv2d_0a_1x1")
            b1 = c.concat([conv(b1, 384, [1, 3], "Conv2d_0b_1x3"),
                           conv(b1, 384, [3, 1], "Conv2d_0b_3x1" if name == "Mixed_7b"
                                else "Conv2d_0c_3x1")], 3)
        with c.variable_scope("Branch_2"):
            b2 = conv(net, 448, [1, 1], "Conv2d_0a_1x1")
            b2 = conv(b2, 384, [3, 3], "Conv2d_0b_3x3")
            b2 = c.concat([conv(b2, 384, [1, 3], "Conv2d_0c_1x3"),
                           conv(b2, 384, [3, 1], "Conv2d_0d_3x1")], 3)
        with c.variable_scope("Branch_3"):
            b3 = c.avg_pool2d(net, [3, 3], scope="AvgPool_0a_3x3")
            b3 = conv(b3, 192, [1, 1], "Conv2d_0b_1x1")
        return [b0, b1, b2, b3]

    def mixed(self, net, name):
        with c.variable_scope(name):
            if name.startswith("Mixed_5"):
                branches = self.mixed_5(net, name)
            elif name == "Mixed_6a":
                branches = self.mixed_6a(net)
            elif name.startswith("Mixed_6"):
                branches = self.mixed_6(net, {"Mixed_6b": 128, "Mixed_6c": 160,
                                              "Mixed_6d": 160, "Mixed_6e": 192}[name])
            elif name == "Mixed_7a":
                branches = self.mixed_7a(net)
            else:
                branches = self.mixed_7(net, name)
            return c.concat(branches, 3)


def inception_v3_base(inputs, final_endpoint="Mixed_7c", min_depth=16, depth_multiplier=1.0,
                      scope=None):
    """The convolutional part up to `final_endpoint` (299x299 inputs give 8x8x2048 at
    Mixed_7c); returns (net, end_points)."""
    if depth_multiplier <= 0:
        raise ValueError("depth_multiplier is not greater than zero.")
    if final_endpoint not in _ORDER:
        raise ValueError(f"Unknown final endpoint {final_endpoint}")
    build, end_points = _Builder(depth_multiplier, min_depth), {}
    with c.variable_scope(scope, "InceptionV3", [inputs]):
        net = inputs
        for index, name in enumerate(_ORDER):
            padding = "VALID" if index < 7 else "SAME"
            with c.arg_scope([c.conv2d, c.max_pool2d, c.avg_pool2d], stride=1,
                             padding=padding):
                net = build.stem(net, name) if index < 7 else build.mixed(net, name)
            end_points[name] = net
            if name == final_endpoint:
                return net, end_points
    raise ValueError(f"Unknown final endpoint {final_endpoint}")


def inception_v3(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.8,
                 min_depth=16, depth_multiplier=1.0, prediction_fn=c.softmax,
                 spatial_squeeze=True, reuse=None, create_aux_logits=True, scope="InceptionV3",
                 global_pool=False):
    """Inception v3 with its classifier (and the auxiliary classifier on Mixed_6e when
    `create_aux_logits`); returns (logits, end_points)."""
    if depth_multiplier <= 0:
        raise ValueError("depth_multiplier is not greater than zero.")
    depth = _Builder(depth_multiplier, min_depth).depth
    with c.variable_scope(scope, "InceptionV3", [inputs], reuse=reuse) as sc:
        with c.arg_scope([c.batch_norm, c.dropout], is_training=is_training):
            net, end_points = inception_v3_base(inputs, scope=sc, min_depth=min_depth,
                                                depth_multiplier=depth_multiplier)
            if create_aux_logits and num_classes:
                with c.arg_scope([c.conv2d, c.max_pool2d, c.avg_pool2d], stride=1,
                                 padding="SAME"):
                    with c.variable_scope("AuxLogits"):
                        aux = c.avg_pool2d(end_points["Mixed_6e"], [5, 5], stride=3,
                                           padding="VALID", scope="AvgPool_1a_5x5")
                        aux = c.conv2d(aux, depth(128), [1, 1], scope="Conv2d_1b_1x1")
                        kernel = _reduced_kernel_size_for_small_input(aux, [5, 5])
                        aux = c.conv2d(aux, depth(768), kernel,
                                       weights_initializer=c.trunc_normal(0.01),
                                       padding="VALID", scope="Conv2d_2a_{}x{}".format(*kernel))
                        aux = c.conv2d(aux, num_classes, [1, 1], activation_fn=None,
                                       normalizer_fn=None,
                                       weights_initializer=c.trunc_normal(0.001),
                                       scope="Conv2d_2b_1x1")
                        if spatial_squeeze:
                            aux = c.squeeze_spatial(aux, "SpatialSqueeze")
                        end_points["AuxLogits"] = aux
            with c.variable_scope("Logits"):
                if global_pool:
                    net = c.global_average(net, "GlobalPool")
                    end_points["global_pool"] = net
                else:
                    kernel = _reduced_kernel_size_for_small_input(net, [8, 8])
                    net = c.avg_pool2d(net, kernel, padding="VALID",
                                       scope="AvgPool_1a_{}x{}".format(*kernel))
                    end_points["AvgPool_1a"] = net
                if not num_classes:
                    return net, end_points
                net = c.dropout(net, keep_prob=dropout_keep_prob, scope="Dropout_1b")
                end_points["PreLogits"] = net
                logits = c.conv2d(net, num_classes, [1, 1], activation_fn=None,
                                  normalizer_fn=None, scope="Conv2d_1c_1x1")
                if spatial_squeeze:
                    logits = c.squeeze_spatial(logits, "SpatialSqueeze")
            end_points["Logits"] = logits
            end_points["Predictions"] = prediction_fn(logits, scope="Predictions")
    return logits, end_points


inception_v3.default_image_size = 299
