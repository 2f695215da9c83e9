"""`tf.contrib.image`: projective transforms of images (transform, rotate, translate and the
transform algebra), dense_image_warp (bilinear warping by a flow field) and
connected_components. Images are [height, width], [height, width, channels] or
[batch, height, width, channels]; the result has the same rank."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.ops import array_ops, linalg_ops, math_ops, reduction_ops, slicing_ops
from tensorweave.ops.op_util import make_tensor


def _as_batch(images):
    images = convert_to_tensor(images, name="images")
    rank = images.shape.ndims
    if rank not in (2, 3, 4):
        raise TypeError(f"Images should have rank between 2 and 4, got {images.shape}")
    batched = images
    if rank == 2:
        batched = array_ops.expand_dims(array_ops.expand_dims(images, 0), -1)
    elif rank == 3:
        batched = array_ops.expand_dims(images, 0)
    return images, batched, rank


def _restore_rank(result, rank):
    if rank == 2:
        return array_ops.squeeze(result, [0, 3])
    if rank == 3:
        return array_ops.squeeze(result, [0])
    return result


def transform(images, transforms, interpolation="NEAREST", output_shape=None, name=None):
    """Each image resampled through its projective transform ([8] or [batch, 8]: each output
    point (x, y) reads the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k),
    k = c0 x + c1 y + 1); points outside read 0."""
    with name_scope(name, "transform", [images, transforms]):
        images, batched, rank = _as_batch(images)
        interpolation = interpolation.upper()
        if interpolation not in ("NEAREST", "BILINEAR"):
            raise ValueError(f"transform: interpolation must be 'NEAREST' or 'BILINEAR', got "
                             f"{interpolation!r}")
        transforms = math_ops.cast(convert_to_tensor(transforms, name="transforms"),
                                   dtypes.float32)
        if transforms.shape.ndims == 1:
            transforms = array_ops.expand_dims(transforms, 0)
        if transforms.shape.ndims != 2:
            raise ValueError(f"transforms should have rank 1 or 2, got {transforms.shape}")
        if output_shape is None:
            output_shape = array_ops.shape(batched)[1:3]
        output_shape = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
        result = make_tensor("ImageProjectiveTransformV2", [batched, transforms, output_shape],
                             {"interpolation": interpolation})
        return _restore_rank(result, rank)


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """[batch, 8] transforms rotating by `angles` (radians, counterclockwise) about the centre."""
    with name_scope(name, "angles_to_projective_transforms"):
        angles = math_ops.cast(convert_to_tensor(angles, name="angles"), dtypes.float32)
        if angles.shape.ndims == 0:
            angles = array_ops.expand_dims(angles, 0)
        height = math_ops.cast(image_height, dtypes.float32)
        width = math_ops.cast(image_width, dtypes.float32)
        cos, sin = math_ops.cos(angles), math_ops.sin(angles)
        x_offset = ((width - 1) - (cos * (width - 1) - sin * (height - 1))) / 2.0
        y_offset = ((height - 1) - (sin * (width - 1) + cos * (height - 1))) / 2.0
        zeros = array_ops.zeros_like(angles)
        return slicing_ops.stack([cos, -sin, x_offset, sin, cos, y_offset, zeros, zeros], 1)


def rotate(images, angles, interpolation="NEAREST", name=None):
    """Images rotated counterclockwise by `angles` (radians; one, or one per image)."""
    with name_scope(name, "rotate", [images, angles]):
        images, batched, rank = _as_batch(images)
        shape = array_ops.shape(batched)
        transforms = angles_to_projective_transforms(angles, shape[1], shape[2])
        return _restore_rank(transform(batched, transforms, interpolation), rank)


def translations_to_projective_transforms(translations, name=None):
    """[batch, 8] transforms shifting by [dx, dy] (one, or one per image)."""
    with name_scope(name, "translations_to_projective_transforms"):
        shifts = math_ops.cast(convert_to_tensor(translations, name="translations"),
                               dtypes.float32)
        if shifts.shape.ndims == 1:
            shifts = array_ops.expand_dims(shifts, 0)
        ones, zeros = array_ops.ones_like(shifts[:, 0]), array_ops.zeros_like(shifts[:, 0])
        return slicing_ops.stack([ones, zeros, -shifts[:, 0], zeros, ones, -shifts[:, 1],
                                  zeros, zeros], 1)


def translate(images, translations, interpolation="NEAREST", name=None):
    """Images shifted by [dx, dy] pixels (content moves right and down for positive values)."""
    with name_scope(name, "translate", [images, translations]):
        return transform(images, translations_to_projective_transforms(translations),
                         interpolation)


def flat_transforms_to_matrices(transforms, name=None):
    """[batch, 8] -> [batch, 3, 3] (the last entry 1)."""
    with name_scope(name, "flat_transforms_to_matrices"):
        transforms = convert_to_tensor(transforms, name="transforms")
        if transforms.shape.ndims == 1:
            transforms = array_ops.expand_dims(transforms, 0)
        ones = array_ops.ones_like(transforms[:, :1])
        return array_ops.reshape(slicing_ops.concat([transforms, ones], 1), [-1, 3, 3])


def matrices_to_flat_transforms(transform_matrices, name=None):
    """[batch, 3, 3] -> [batch, 8], normalised so that the last entry is 1."""
    with name_scope(name, "matrices_to_flat_transforms"):
        matrices = convert_to_tensor(transform_matrices, name="transform_matrices")
        flat = array_ops.reshape(matrices, [-1, 9])
        return flat[:, :8] / flat[:, 8:9]


def compose_transforms(*transforms):
    """One transform doing what the given ones do together: their 3x3 matrices multiplied
    left to right (so the last is applied to the output coordinates first)."""
    if not transforms:
        raise ValueError("compose_transforms needs at least one transform")
    with name_scope(None, "compose_transforms"):
        composed = flat_transforms_to_matrices(transforms[0])
        for other in transforms[1:]:
            composed = linalg_ops.matmul(composed, flat_transforms_to_matrices(other))
        return matrices_to_flat_transforms(composed)


def connected_components(images):
    """int64 ids of the 4-connected components of equal non-zero values (0 for zeros),
    consecutive from 1 over the batch. images: [rows, columns] or [images, rows, columns]."""
    with name_scope(None, "connected_components", [images]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims not in (2, 3):
            raise TypeError(f"connected_components: images must be [rows, columns] or "
                            f"[images, rows, columns], got {images.shape}")
        if images.shape.ndims == 2:
            return array_ops.squeeze(make_tensor("ImageConnectedComponents",
                                                 [array_ops.expand_dims(images, 0)]), [0])
        return make_tensor("ImageConnectedComponents", [images])


def dense_image_warp(image, flow, name="dense_image_warp"):
    """output[b, y, x] = image[b, y - flow[b, y, x, 0], x - flow[b, y, x, 1]], sampled
    bilinearly (clamped at the borders); differentiable in the image and the flow."""
    with name_scope(name, "dense_image_warp", [image, flow]):
        image = convert_to_tensor(image, name="image")
        flow = math_ops.cast(convert_to_tensor(flow, name="flow"), image.dtype)
        dims = image.shape.as_list()
        if len(dims) != 4 or None in dims[1:]:
            raise ValueError(f"dense_image_warp: image must be [batch, height, width, "
                             f"channels] with known height, width and channels, got "
                             f"{image.shape}")
        _, height, width, channels = dims
        grid = np.stack(np.meshgrid(np.arange(height), np.arange(width), indexing="ij"), -1)
        query = constant(grid.astype(image.dtype.np_dtype)) - flow  # [b, h, w, 2]
        return _interpolate_bilinear(image, query, height, width, channels)


def _interpolate_bilinear(image, query, height, width, channels):
    floors, alphas = [], []
    for axis, size in ((0, height), (1, width)):
        coord = query[..., axis]
        base = math_ops.minimum(math_ops.maximum(math_ops.floor(coord), 0.0),
                                float(max(size - 2, 0)))
        alphas.append(array_ops.expand_dims(
            math_ops.minimum(math_ops.maximum(coord - base, 0.0), 1.0), -1))
        floors.append(math_ops.cast(base, dtypes.int32))
    batch = array_ops.shape(image)[0]
    flat = array_ops.reshape(image, [-1, channels])
    offsets = array_ops.reshape(reduction_ops.range_(batch) * (height * width), [-1, 1, 1])

    def gather(dy, dx):
        index = offsets + (floors[0] + dy) * width + floors[1] + dx
        return slicing_ops.gather(flat, index)

    top = gather(0, 0) + alphas[1] * (gather(0, 1) - gather(0, 0))
    bottom = gather(1, 0) + alphas[1] * (gather(1, 1) - gather(1, 0))
    return top + alphas[0] * (bottom - top)

