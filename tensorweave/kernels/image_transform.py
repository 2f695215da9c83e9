"""Kernels of the projective image transform (tf.contrib.image.transform / rotate / translate),
its exact adjoint (the gradient to the images), and connected components.

A transform row [a0, a1, a2, b0, b1, b2, c0, c1] maps each output pixel (x, y) to the input
point ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, sampled with the
nearest pixel or bilinearly; points outside the image read 0.
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


def _sources(transforms, batch, height, width):
    """The input coordinates (x, y), each [batch, height, width], of every output pixel."""
    transforms = np.asarray(transforms, np.float64)
    if transforms.ndim != 2 or transforms.shape[1] != 8 or transforms.shape[0] not in (1, batch):
        raise errors.InvalidArgumentError(None, None, f"ImageProjectiveTransform: transforms "
                                          f"must be [1 or batch, 8], got "
                                          f"{list(transforms.shape)}")
    if transforms.shape[0] == 1:
        transforms = np.repeat(transforms, batch, 0)
    ys, xs = np.meshgrid(np.arange(height, dtype=np.float64),
                         np.arange(width, dtype=np.float64), indexing="ij")
    t = transforms[:, :, None, None]
    k = t[:, 6] * xs + t[:, 7] * ys + 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        src_x = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / k
        src_y = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / k
    return src_x, src_y


def _taps(src_x, src_y, height, width, interpolation):
    """[(row index, col index, weight)] per output pixel: the input pixels it reads."""
    if interpolation == "NEAREST":
        # Halves round away from zero (C's round), not to even.
        row = np.sign(src_y) * np.floor(np.abs(src_y) + 0.5)
        col = np.sign(src_x) * np.floor(np.abs(src_x) + 0.5)
        return [(row, col, np.ones_like(row))]
    if interpolation != "BILINEAR":
        raise errors.InvalidArgumentError(None, None, f"ImageProjectiveTransform: interpolation "
                                          f"must be NEAREST or BILINEAR, got {interpolation}")
    y0, x0 = np.floor(src_y), np.floor(src_x)
    fy, fx = src_y - y0, src_x - x0
    return [(y0, x0, (1 - fy) * (1 - fx)), (y0, x0 + 1, (1 - fy) * fx),
            (y0 + 1, x0, fy * (1 - fx)), (y0 + 1, x0 + 1, fy * fx)]


def _valid(row, col, height, width):
    ok = np.isfinite(row) & np.isfinite(col)
    ok &= (row >= 0) & (row <= height - 1) & (col >= 0) & (col <= width - 1)
    return ok


def _output_size(output_shape, height, width):
    size = [int(v) for v in np.asarray(output_shape).reshape(-1)]
    if len(size) != 2 or min(size) < 1:
        raise errors.InvalidArgumentError(None, None, f"ImageProjectiveTransform: output_shape "
                                          f"must be [height, width] > 0, got {size}")
    return size


@register_kernel("ImageProjectiveTransformV2")
def image_projective_transform(images, transforms, output_shape, *, interpolation, dtype):
    images = np.asarray(images)
    if images.ndim != 4:
        raise errors.InvalidArgumentError(None, None, f"ImageProjectiveTransform: images must "
                                          f"be [batch, height, width, channels], got "
                                          f"{list(images.shape)}")
    batch, height, width, _ = images.shape
    out_h, out_w = _output_size(output_shape, height, width)
    src_x, src_y = _sources(transforms, batch, out_h, out_w)
    out = np.zeros((batch, out_h, out_w, images.shape[3]), np.float64)
    b = np.arange(batch)[:, None, None]
    for row, col, weight in _taps(src_x, src_y, height, width, interpolation):
        ok = _valid(row, col, height, width)
        r = np.where(ok, row, 0).astype(np.int64)
        c = np.where(ok, col, 0).astype(np.int64)
        out += (images[b, r, c].astype(np.float64) * np.where(ok, weight, 0.0)[..., None])
    if images.dtype.kind in "iu":
        out = np.round(out)
    return out.astype(images.dtype)


@register_kernel("ImageProjectiveTransformV2Grad")
def image_projective_transform_grad(grad, transforms, image_shape, *, interpolation):
    """The adjoint of the transform: each output pixel's gradient added back into the input
    pixels it read, with the same weights."""
    grad = np.asarray(grad)
    batch, height, width, channels = (int(v) for v in np.asarray(image_shape).reshape(-1))
    out_h, out_w = grad.shape[1], grad.shape[2]
    src_x, src_y = _sources(transforms, batch, out_h, out_w)
    result = np.zeros((batch, height, width, channels), np.float64)
    b = np.broadcast_to(np.arange(batch)[:, None, None], (batch, out_h, out_w))
    for row, col, weight in _taps(src_x, src_y, height, width, interpolation):
        ok = _valid(row, col, height, width)
        np.add.at(result, (b[ok], row[ok].astype(np.int64), col[ok].astype(np.int64)),
                  grad[ok].astype(np.float64) * weight[ok][:, None])
    return result.astype(grad.dtype)


@register_kernel("ImageConnectedComponents")
def image_connected_components(image):
    """Ids of 4-connected components of equal non-zero values, numbered from 1 in row-major
    order of their first pixel over the whole batch; 0 for zero pixels."""
    image = np.asarray(image)
    if image.ndim != 3:
        raise errors.InvalidArgumentError(None, None, "connected_components: image must be "
                                          f"[batch, height, width], got {list(image.shape)}")
    flat = image.reshape(-1)
    parent = np.arange(flat.size)

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    batch, height, width = image.shape
    index = np.arange(flat.size).reshape(image.shape)
    for a, b in ((index[:, :, :-1], index[:, :, 1:]), (index[:, :-1, :], index[:, 1:, :])):
        a, b = a.reshape(-1), b.reshape(-1)
        same = (flat[a] == flat[b]) & (flat[a] != 0)
        for i, j in zip(a[same], b[same]):
            ri, rj = root(i), root(j)
            if ri != rj:
                parent[max(ri, rj)] = min(ri, rj)
    roots = np.array([root(i) for i in range(flat.size)])
    labels = np.zeros(flat.size, np.int64)
    nonzero = flat != 0
    _, first = np.unique(roots[nonzero], return_inverse=True)
    labels[nonzero] = first + 1
    return labels.reshape(image.shape)
