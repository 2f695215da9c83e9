"""`tensorflow.contrib.slim.python.slim.nets`: the slim nets by their TF 1.x source path."""
from tensorweave.contrib.slim.nets import (alexnet, inception, overfeat,  # noqa: F401
                                           resnet_utils, resnet_v1, resnet_v2, vgg)
