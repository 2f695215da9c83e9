"""tf.keras.applications built with weights=None: the parameter counts Keras's architectures
have, Keras's layer names, preprocessing as Keras computes it, and a clear refusal of the
ImageNet download."""
import numpy as np
import pytest

import tensorweave as tf

applications = tf.keras.applications


@pytest.mark.parametrize("build, kwargs, params, shape", [
    (applications.MobileNet, {}, 4253864, (None, 1000)),
    (applications.MobileNetV2, {}, 3538984, (None, 1000)),
    (applications.MobileNetV2, {"alpha": 0.35, "input_shape": (96, 96, 3), "include_top": False},
     410208, (None, 3, 3, 1280)),
    (applications.ResNet50, {}, 25636712, (None, 1000)),
    (applications.VGG16, {"include_top": False}, 14714688, (None, 7, 7, 512)),
    (applications.VGG19, {"include_top": False, "pooling": "max"}, 20024384, (None, 512)),
])
def test_architectures_have_keras_parameter_counts(build, kwargs, params, shape):
    with tf.Graph().as_default():
        model = build(weights=None, **kwargs)
        assert model.count_params() == params
        assert model.output_shape == shape


def test_small_mobilenet_runs_and_keeps_keras_layer_names():
    with tf.Graph().as_default():
        model = applications.MobileNet(input_shape=(64, 64, 3), alpha=0.25, weights=None,
                                       classes=7)
        names = [layer.name for layer in model.layers]
        assert names[1:5] == ["conv1_pad", "conv1", "conv1_bn", "conv1_relu"]
        assert "conv_pw_13_relu" in names and names[-1] == "reshape_2"
        probabilities = model.predict(np.random.RandomState(0).rand(2, 64, 64, 3))
        assert probabilities.shape == (2, 7)
        np.testing.assert_allclose(probabilities.sum(1), 1.0, rtol=1e-5)


def test_preprocess_input_modes():
    image = np.arange(2 * 2 * 3, dtype=np.float32).reshape(1, 2, 2, 3) * 10
    bgr = image[..., ::-1] - np.array([103.939, 116.779, 123.68], np.float32)
    np.testing.assert_allclose(applications.vgg16.preprocess_input(image), bgr, rtol=1e-6)
    np.testing.assert_allclose(applications.resnet50.preprocess_input(image), bgr, rtol=1e-6)
    np.testing.assert_allclose(applications.mobilenet.preprocess_input(image),
                               image / 127.5 - 1, rtol=1e-6)


def test_imagenet_weights_are_refused_clearly():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="downloads nothing"):
            applications.ResNet50()
        with pytest.raises(ValueError, match="no such file"):
            applications.VGG16(weights="/nonexistent/vgg.h5")
    with pytest.raises(RuntimeError, match="class index"):
        applications.mobilenet.decode_predictions(np.zeros((1, 1000)))
