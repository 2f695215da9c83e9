"""MobileNet v1 (Howard et al., 2017): a strided 3x3 convolution, then 13 depthwise-separable
blocks (3x3 depthwise, 1x1 pointwise, each with batch normalisation and ReLU6); `alpha` scales
every layer's width, `depth_multiplier` the depthwise channels."""
from tensorweave.keras import backend, layers
from tensorweave.keras.applications import imagenet_utils

# (pointwise filters, stride) of the depthwise-separable blocks 1..13
BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
          (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))


def _separable(x, filters, alpha, depth_multiplier, stride, block, axis):
    if stride != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid",
                               depth_multiplier=depth_multiplier, strides=(stride, stride),
                               use_bias=False, name=f"conv_dw_{block}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_dw_{block}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block}_relu")(x)
    x = layers.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False,
                      name=f"conv_pw_{block}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_pw_{block}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block}_relu")(x)


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3, include_top=True,
              weights="imagenet", input_tensor=None, pooling=None, classes=1000):
    imagenet_utils.check_weights(weights, include_top, classes, "MobileNet")
    inputs = imagenet_utils.model_input(input_tensor, input_shape, 224)
    axis = 3 if backend.image_data_format() == "channels_last" else 1
    x = layers.ZeroPadding2D(((0, 1), (0, 1)), name="conv1_pad")(inputs)
    x = layers.Conv2D(int(32 * alpha), (3, 3), strides=(2, 2), use_bias=False,
                      name="conv1")(x)
    x = layers.BatchNormalization(axis=axis, name="conv1_bn")(x)
    x = layers.ReLU(6.0, name="conv1_relu")(x)
    for block, (filters, stride) in enumerate(BLOCKS, start=1):
        x = _separable(x, filters, alpha, depth_multiplier, stride, block, axis)
    if include_top:
        x = layers.GlobalAveragePooling2D()(x)
        x = layers.Reshape((1, 1, int(1024 * alpha)), name="reshape_1")(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Activation("softmax", name="act_softmax")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    return imagenet_utils.finish_scaled(inputs, x, "mobilenet", alpha, weights)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
