"""VGG16 (Simonyan and Zisserman, 2014): five blocks of 3x3 convolutions and max pooling, then
two 4096-unit layers and the classifier."""
from tensorweave.keras import layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model

BLOCKS = ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3))


def vgg(name, blocks, include_top, weights, input_tensor, input_shape, pooling, classes):
    imagenet_utils.check_weights(weights, include_top, classes, name)
    inputs = imagenet_utils.model_input(input_tensor, input_shape, 224)
    x = inputs
    for block, (filters, convs) in enumerate(blocks, start=1):
        for conv in range(1, convs + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                              name=f"block{block}_conv{conv}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        x = layers.Dense(classes, activation="softmax", name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    return imagenet_utils.finish(Model(inputs, x, name=name.lower()), weights)


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
          pooling=None, classes=1000):
    return vgg("VGG16", BLOCKS, include_top, weights, input_tensor, input_shape, pooling,
               classes)


def preprocess_input(x, data_format=None):
    return imagenet_utils.preprocess_input(x, data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
