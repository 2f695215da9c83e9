"""`tf.keras.layers`: re-exports."""
from tensorweave.keras.engine.base_layer import Layer  # noqa: F401
from tensorweave.keras.engine.input_layer import Input, InputLayer  # noqa: F401
from tensorweave.layers.base import InputSpec  # noqa: F401
from tensorweave.keras.layers.core import (Dense, Activation, Dropout, Flatten,  # noqa: F401
                                           Reshape, Permute, RepeatVector, Lambda, Embedding,
                                           Masking,
                                           ActivityRegularization)
from tensorweave.keras.layers.convolutional import (Conv1D, Conv2D, Conv3D,  # noqa: F401
                                                    Convolution1D, Convolution2D,
                                                    Convolution3D, MaxPooling1D, MaxPooling2D,
                                                    MaxPooling3D, AveragePooling1D,
                                                    AveragePooling2D, AveragePooling3D,
                                                    MaxPool1D, MaxPool2D, MaxPool3D, AvgPool1D,
                                                    AvgPool2D, AvgPool3D,
                                                    GlobalAveragePooling1D, GlobalMaxPooling1D,
                                                    GlobalAveragePooling2D, GlobalMaxPooling2D,
                                                    GlobalAvgPool2D, GlobalMaxPool2D,
                                                    Conv2DTranspose, ZeroPadding2D,
                                                    UpSampling2D, SeparableConv2D,
                                                    DepthwiseConv2D)
from tensorweave.keras.layers.normalization import (BatchNormalization,  # noqa: F401
                                                    LayerNormalization)
from tensorweave.keras.layers.merge import (Add, Subtract, Multiply, Average,  # noqa: F401
                                            Maximum, Minimum, Concatenate, add, subtract,
                                            multiply, average, maximum, minimum, concatenate)
from tensorweave.keras.layers.recurrent import (RNN, SimpleRNN, LSTM, GRU,  # noqa: F401
                                                SimpleRNNCell, LSTMCell, GRUCell)
from tensorweave.keras.layers.convolutional_recurrent import ConvLSTM2D  # noqa: F401
from tensorweave.keras.layers.advanced import (LeakyReLU, ReLU, ELU, Softmax,  # noqa: F401
                                               TimeDistributed, Bidirectional)
from tensorweave.keras.layers.noise import (GaussianNoise, GaussianDropout,  # noqa: F401
                                            SpatialDropout1D, SpatialDropout2D)
