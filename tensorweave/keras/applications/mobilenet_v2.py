"""MobileNetV2 (Sandler et al., 2018): inverted residual blocks (1x1 expansion, 3x3 depthwise,
linear 1x1 projection, with a shortcut when shapes allow) between a strided stem and a 1x1
convolution to 1280 features; `alpha` scales the widths (to multiples of 8)."""
from tensorweave.keras import layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.applications.mobilenet import (decode_predictions,  # noqa: F401
                                                      preprocess_input)

# (filters, stride, expansion) of blocks 0..16
BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6),
          (64, 1, 6), (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6),
          (160, 1, 6), (160, 1, 6), (320, 1, 6))


def _divisible(value, divisor=8):
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _pad_for_stride_2(x, name):
    """Keras's correct_pad: one less row/column before when the size is even."""
    rows, cols = x.shape.as_list()[1:3]
    before = [0 if size is None or size % 2 == 0 else 1 for size in (rows, cols)]
    return layers.ZeroPadding2D(((before[0], 1), (before[1], 1)), name=name)(x)


def _batch_norm(x, name):
    return layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name=name)(x)


def _inverted_residual(inputs, filters, stride, expansion, alpha, block):
    channels = inputs.shape.as_list()[-1]
    out_filters = _divisible(int(filters * alpha))
    prefix = f"block_{block}_" if block else "expanded_conv_"
    x = inputs
    if block:
        x = layers.Conv2D(expansion * channels, 1, padding="same", use_bias=False,
                          name=prefix + "expand")(x)
        x = layers.ReLU(6.0, name=prefix + "expand_relu")(_batch_norm(x, prefix + "expand_BN"))
    if stride == 2:
        x = _pad_for_stride_2(x, prefix + "pad")
    x = layers.DepthwiseConv2D(3, strides=stride, use_bias=False,
                               padding="same" if stride == 1 else "valid",
                               name=prefix + "depthwise")(x)
    x = layers.ReLU(6.0, name=prefix + "depthwise_relu")(
        _batch_norm(x, prefix + "depthwise_BN"))
    x = layers.Conv2D(out_filters, 1, padding="same", use_bias=False, name=prefix + "project")(x)
    x = _batch_norm(x, prefix + "project_BN")
    if channels == out_filters and stride == 1:
        return layers.Add(name=prefix + "add")([inputs, x])
    return x


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet",
                input_tensor=None, pooling=None, classes=1000):
    imagenet_utils.check_weights(weights, include_top, classes, "MobileNetV2")
    inputs = imagenet_utils.model_input(input_tensor, input_shape, 224)
    x = _pad_for_stride_2(inputs, "Conv1_pad")
    x = layers.Conv2D(_divisible(32 * alpha), 3, strides=(2, 2), padding="valid",
                      use_bias=False, name="Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(_batch_norm(x, "bn_Conv1"))
    for block, (filters, stride, expansion) in enumerate(BLOCKS):
        x = _inverted_residual(x, filters, stride, expansion, alpha, block)
    last = _divisible(1280 * alpha) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, 1, use_bias=False, name="Conv_1")(x)
    x = layers.ReLU(6.0, name="out_relu")(_batch_norm(x, "Conv_1_bn"))
    if include_top:
        x = layers.GlobalAveragePooling2D()(x)
        x = layers.Dense(classes, activation="softmax", name="Logits")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    return imagenet_utils.finish_scaled(inputs, x, "mobilenetv2", alpha, weights)
