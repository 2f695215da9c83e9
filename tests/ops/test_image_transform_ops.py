"""tf.contrib.image: projective transforms (rotate, translate, compose) against NumPy
resampling written from the definition, the gradient to the images (the exact adjoint,
checked numerically), dense_image_warp and connected components."""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

COVERED_OP_TYPES = {"ImageProjectiveTransformV2", "ImageProjectiveTransformV2Grad",
                    "ImageConnectedComponents"}
RNG = np.random.default_rng(4)


def reference_transform(images, transform, interpolation):
    batch, height, width, channels = images.shape
    out = np.zeros_like(images, dtype=np.float64)
    a0, a1, a2, b0, b1, b2, c0, c1 = transform
    for y in range(height):
        for x in range(width):
            k = c0 * x + c1 * y + 1
            sx, sy = (a0 * x + a1 * y + a2) / k, (b0 * x + b1 * y + b2) / k
            if interpolation == "NEAREST":
                taps = [(math.floor(sy + 0.5), math.floor(sx + 0.5), 1.0)]
            else:
                y0, x0 = math.floor(sy), math.floor(sx)
                fy, fx = sy - y0, sx - x0
                taps = [(y0, x0, (1 - fy) * (1 - fx)), (y0, x0 + 1, (1 - fy) * fx),
                        (y0 + 1, x0, fy * (1 - fx)), (y0 + 1, x0 + 1, fy * fx)]
            for r, c, w in taps:
                if 0 <= r < height and 0 <= c < width:
                    out[:, y, x] += w * images[:, r, c]
    return out


def _run(tensor):
    with tf.Session() as session:
        return session.run(tensor)


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR"])
def test_transform_against_the_definition(interpolation):
    images = RNG.normal(size=(2, 5, 6, 3))
    transform = [0.9, -0.2, 0.7, 0.15, 1.1, -0.4, 0.01, -0.02]
    with tf.Graph().as_default():
        got = _run(tf.contrib.image.transform(tf.constant(images), transform, interpolation))
    np.testing.assert_allclose(got, reference_transform(images, transform, interpolation),
                               atol=1e-5)


def test_rotate_and_translate_move_pixels_where_expected():
    image = np.zeros((5, 5), np.float32)
    image[1, 3] = 1.0
    with tf.Graph().as_default():
        quarter = _run(tf.contrib.image.rotate(image, math.pi / 2))
        shifted = _run(tf.contrib.image.translate(image[None, :, :, None], [-2, 1]))
        same = _run(tf.contrib.image.transform(image, tf.contrib.image.compose_transforms(
            tf.contrib.image.angles_to_projective_transforms(0.3, 5, 5),
            tf.contrib.image.angles_to_projective_transforms(-0.3, 5, 5)), "BILINEAR"))
    # Counterclockwise by 90 degrees about the centre: (row 1, col 3) -> (row 1, col 1).
    assert quarter[1, 1] == 1.0 and quarter.sum() == 1.0
    assert shifted[0, 2, 1, 0] == 1.0 and shifted.sum() == 1.0
    np.testing.assert_allclose(same, image, atol=1e-5)


def test_gradient_to_the_images_is_the_adjoint():
    transform = np.array([0.8, 0.3, 0.5, -0.25, 0.9, 1.2, 0.0, 0.0], np.float32)
    images = RNG.normal(size=(1, 4, 5, 2))
    for interpolation in ("NEAREST", "BILINEAR"):
        gradient_checker.check_gradients(
            lambda x: tf.contrib.image.transform(x, transform, interpolation),
            [images], name=f"transform-{interpolation}")


def test_dense_image_warp_and_its_gradients():
    image = RNG.normal(size=(1, 4, 5, 2))
    flow = RNG.uniform(-0.8, 0.8, size=(1, 4, 5, 2))
    with tf.Graph().as_default():
        got = _run(tf.contrib.image.dense_image_warp(tf.constant(image), tf.constant(flow)))
    for y in range(4):
        for x in range(5):
            qy, qx = y - flow[0, y, x, 0], x - flow[0, y, x, 1]
            y0, x0 = min(max(math.floor(qy), 0), 2), min(max(math.floor(qx), 0), 3)
            ay, ax = min(max(qy - y0, 0), 1), min(max(qx - x0, 0), 1)
            top = image[0, y0, x0] + ax * (image[0, y0, x0 + 1] - image[0, y0, x0])
            bottom = image[0, y0 + 1, x0] + ax * (image[0, y0 + 1, x0 + 1] - image[0, y0 + 1, x0])
            np.testing.assert_allclose(got[0, y, x], top + ay * (bottom - top), rtol=1e-10)
    gradient_checker.check_gradients(tf.contrib.image.dense_image_warp, [image, flow],
                                     name="dense_image_warp")


def test_connected_components():
    image = np.array([[[1, 1, 0, 2],
                       [0, 1, 0, 2],
                       [3, 0, 0, 2]],
                      [[0, 5, 5, 0],
                       [5, 0, 5, 7],
                       [0, 0, 0, 7]]])
    with tf.Graph().as_default():
        got = _run(tf.contrib.image.connected_components(image))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [[[1, 1, 0, 2], [0, 1, 0, 2], [3, 0, 0, 2]],
                                        [[0, 4, 4, 0], [5, 0, 4, 6], [0, 0, 0, 6]]])
    with pytest.raises(ValueError, match="interpolation must be"):
        tf.contrib.image.transform(np.zeros((2, 2)), [1, 0, 0, 0, 1, 0, 0, 0], "CUBIC")
