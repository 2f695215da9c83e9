"""ResNet50 (He et al., 2015): a 7x7 stem, then four stages of bottleneck blocks (1x1, 3x3,
1x1 convolutions with batch normalisation) around identity shortcuts, the first block of each
stage with a projecting 1x1 convolution."""
from tensorweave.keras import backend, layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model

STAGES = ((2, (64, 64, 256), "abc", (1, 1)), (3, (128, 128, 512), "abcd", (2, 2)),
          (4, (256, 256, 1024), "abcdef", (2, 2)), (5, (512, 512, 2048), "abc", (2, 2)))


def _bottleneck(x, filters, stage, block, strides=None):
    """One block; `strides` given: the projecting first block of a stage."""
    axis = 3 if backend.image_data_format() == "channels_last" else 1
    conv, bn = f"res{stage}{block}_branch", f"bn{stage}{block}_branch"
    first, middle, last = filters
    shortcut = x
    x = layers.Conv2D(first, (1, 1), strides=strides or (1, 1),
                      kernel_initializer="he_normal", name=conv + "2a")(x)
    x = layers.Activation("relu")(layers.BatchNormalization(axis=axis, name=bn + "2a")(x))
    x = layers.Conv2D(middle, (3, 3), padding="same", kernel_initializer="he_normal",
                      name=conv + "2b")(x)
    x = layers.Activation("relu")(layers.BatchNormalization(axis=axis, name=bn + "2b")(x))
    x = layers.Conv2D(last, (1, 1), kernel_initializer="he_normal", name=conv + "2c")(x)
    x = layers.BatchNormalization(axis=axis, name=bn + "2c")(x)
    if strides is not None:
        shortcut = layers.Conv2D(last, (1, 1), strides=strides, kernel_initializer="he_normal",
                                 name=conv + "1")(shortcut)
        shortcut = layers.BatchNormalization(axis=axis, name=bn + "1")(shortcut)
    return layers.Activation("relu")(layers.add([x, shortcut]))


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
             pooling=None, classes=1000):
    imagenet_utils.check_weights(weights, include_top, classes, "ResNet50")
    inputs = imagenet_utils.model_input(input_tensor, input_shape, 224)
    axis = 3 if backend.image_data_format() == "channels_last" else 1
    x = layers.ZeroPadding2D(padding=(3, 3), name="conv1_pad")(inputs)
    x = layers.Conv2D(64, (7, 7), strides=(2, 2), kernel_initializer="he_normal",
                      name="conv1")(x)
    x = layers.Activation("relu")(layers.BatchNormalization(axis=axis, name="bn_conv1")(x))
    x = layers.ZeroPadding2D(padding=(1, 1), name="pool1_pad")(x)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    for stage, filters, blocks, strides in STAGES:
        x = _bottleneck(x, filters, stage, blocks[0], strides)
        for block in blocks[1:]:
            x = _bottleneck(x, filters, stage, block)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        x = layers.Dense(classes, activation="softmax", name="fc1000")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    return imagenet_utils.finish(Model(inputs, x, name="resnet50"), weights)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
