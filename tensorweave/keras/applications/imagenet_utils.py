"""What the ImageNet architectures share: input preprocessing, the input and top of a model,
and the weights argument."""
import os

import numpy as np

from tensorweave.keras import backend
from tensorweave.keras import layers
from tensorweave.keras.engine import node as node_lib
from tensorweave.keras.engine.training import Model

_CAFFE_MEAN = np.array([103.939, 116.779, 123.68], np.float32)  # BGR, ImageNet's means


def preprocess_input(x, data_format=None, mode="caffe"):
    """Scales images (RGB, 0-255) as the architecture was trained: 'caffe' (VGG, ResNet50):
    to BGR minus ImageNet's mean; 'tf' (MobileNet): to [-1, 1]; 'torch': to [0, 1] then
    standardised with ImageNet's per-channel mean and deviation. NumPy in, NumPy out."""
    data_format = data_format or backend.image_data_format()
    x = np.asarray(x, np.float32 if not np.issubdtype(np.asarray(x).dtype, np.floating)
                   else np.asarray(x).dtype).copy()
    axis = -1 if data_format == "channels_last" else (0 if x.ndim == 3 else 1)
    shape = [1] * x.ndim
    shape[axis] = 3
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        mean = np.array([0.485, 0.456, 0.406]).reshape(shape)
        std = np.array([0.229, 0.224, 0.225]).reshape(shape)
        return ((x / 255.0 - mean) / std).astype(x.dtype)
    if mode != "caffe":
        raise ValueError(f"preprocess_input: mode must be 'caffe', 'tf' or 'torch', got "
                         f"{mode!r}")
    x = np.flip(x, axis)
    return x - _CAFFE_MEAN.reshape(shape).astype(x.dtype)


def decode_predictions(preds, top=5):
    raise RuntimeError("decode_predictions needs ImageNet's class index file, which TF "
                       "downloads; tensorweave downloads nothing. Map the indices of "
                       "np.argsort(preds)[:, ::-1][:, :top] to class names yourself.")


def check_weights(weights, include_top, classes, name):
    if weights == "imagenet":
        raise ValueError(f"{name}(weights='imagenet'): the pretrained ImageNet weights are "
                         "downloaded by TF, and tensorweave downloads nothing. Use "
                         "weights=None, or pass the path of a Keras weights file (.h5).")
    if not (weights is None or os.path.exists(weights)):
        raise ValueError(f"{name}: weights must be None, 'imagenet' or the path of a weights "
                         f"file, got {weights!r} (no such file)")
    if classes != 1000 and weights is not None and include_top:
        raise ValueError(f"{name}: with classes={classes} the top does not match ImageNet "
                         "weights files")


def model_input(input_tensor, input_shape, default_size, min_size=32):
    """The input tensor of an ImageNet model: `input_tensor`, or an Input of `input_shape`
    (default (size, size, 3))."""
    if input_tensor is not None:
        if node_lib.keras_history(input_tensor) is None:
            return layers.Input(tensor=input_tensor)
        return input_tensor
    if input_shape is None:
        input_shape = (default_size, default_size, 3) if \
            backend.image_data_format() == "channels_last" else (3, default_size, default_size)
    if any(size is not None and size < min_size for size in input_shape[:2]):
        raise ValueError(f"Input size must be at least {min_size}x{min_size}, got "
                         f"input_shape={input_shape}")
    return layers.Input(shape=tuple(input_shape))


def pooled(x, pooling):
    if pooling == "avg":
        return layers.GlobalAveragePooling2D()(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D()(x)
    if pooling is not None:
        raise ValueError(f"pooling must be None, 'avg' or 'max', got {pooling!r}")
    return x


def finish(model, weights):
    if weights is not None:
        model.load_weights(weights)
    return model


def finish_scaled(inputs, outputs, prefix, alpha, weights):
    """A width-scaled model named as Keras names them (mobilenet_1.00_224)."""
    size = inputs.shape.as_list()[1] or 224
    return finish(Model(inputs, outputs, name=f"{prefix}_{alpha:0.2f}_{size}"), weights)
