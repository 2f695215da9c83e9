"""VGG19: VGG16 with four convolutions in each of the last three blocks."""
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.applications.vgg16 import preprocess_input, vgg  # noqa: F401

BLOCKS = ((64, 2), (128, 2), (256, 4), (512, 4), (512, 4))


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
          pooling=None, classes=1000):
    return vgg("VGG19", BLOCKS, include_top, weights, input_tensor, input_shape, pooling,
               classes)


decode_predictions = imagenet_utils.decode_predictions
