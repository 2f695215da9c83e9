"""`tf.layers` (L4): TF 1.x layers as classes and as functions, with their variables made by
tf.get_variable under a variable scope named after the layer. Re-exports only."""
from tensorweave.layers.base import Layer  # noqa: F401
from tensorweave.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten  # noqa: F401
from tensorweave.layers.convolutional import Conv2D, Convolution2D, conv2d  # noqa: F401
from tensorweave.layers.pooling import (MaxPooling2D, AveragePooling2D,  # noqa: F401
                                        MaxPool2D, AveragePool2D, max_pooling2d,
                                        average_pooling2d)
from tensorweave.layers.normalization import (BatchNormalization,  # noqa: F401
                                              batch_normalization)
from tensorweave.layers.regularizers import (l1_regularizer, l2_regularizer,  # noqa: F401
                                             l1_l2_regularizer)
