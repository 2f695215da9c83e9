"""`tf.keras.applications`: the ImageNet architectures MobileNet, MobileNetV2, ResNet50, VGG16
and VGG19, built with Keras's layer names (so Keras's HDF5 weight files load by name), with
`weights=None` (random initialisation). Pretrained ImageNet weights are downloaded by TF, which tensorweave
does not do: weights='imagenet' raises, a path to a weights file loads it."""
from tensorweave.keras.applications import (imagenet_utils, mobilenet,  # noqa: F401
                                             mobilenet_v2, resnet50, vgg16, vgg19)
from tensorweave.keras.applications.mobilenet import MobileNet  # noqa: F401
from tensorweave.keras.applications.mobilenet_v2 import MobileNetV2  # noqa: F401
from tensorweave.keras.applications.resnet50 import ResNet50  # noqa: F401
from tensorweave.keras.applications.vgg16 import VGG16  # noqa: F401
from tensorweave.keras.applications.vgg19 import VGG19  # noqa: F401
