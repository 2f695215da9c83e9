"""`tf.contrib.slim.nets`: the image classification nets TF-Slim ships (alexnet, vgg,
overfeat, inception, resnet_v1, resnet_v2, resnet_utils), built from the slim layers with
TF-Slim's variable and end-point names. Each returns (net, end_points)."""
from tensorweave.contrib.slim.nets import (alexnet, inception, overfeat,  # noqa: F401
                                           resnet_utils, resnet_v1, resnet_v2, vgg)
