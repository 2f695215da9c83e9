"""Independent NumPy references for the convolution and pooling ops: plain loops over output
positions on an explicitly padded input (slow and obvious, for small test shapes only)."""
import numpy as np


def axis_geometry(size, kernel, stride, dilation, padding):
    """(output size, pad before, pad after) along one axis, from the definitions of the modes."""
    span = (kernel - 1) * dilation + 1
    if isinstance(padding, (list, tuple)):
        before, after = padding
        return (size + before + after - span) // stride + 1, before, after
    if padding == "VALID":
        return (size - span) // stride + 1, 0, 0
    out = int(np.ceil(size / stride))
    total = max((out - 1) * stride + span - size, 0)
    return out, total // 2, total - total // 2


def _geometry(x_shape, window, strides, dilations, padding):
    pads = padding if isinstance(padding, (list, tuple)) else (padding, padding)
    rows = axis_geometry(x_shape[1], window[0], strides[0], dilations[0], pads[0])
    cols = axis_geometry(x_shape[2], window[1], strides[1], dilations[1], pads[1])
    return rows, cols


def _windows(x_shape, window, strides, dilations, padding):
    """Yields (oh, ow, [(i, j, ih, iw) for offsets inside the input])."""
    (out_h, top, _), (out_w, left, _) = _geometry(x_shape, window, strides, dilations, padding)
    for oh in range(out_h):
        for ow in range(out_w):
            cells = []
            for i in range(window[0]):
                for j in range(window[1]):
                    ih = oh * strides[0] + i * dilations[0] - top
                    iw = ow * strides[1] + j * dilations[1] - left
                    if 0 <= ih < x_shape[1] and 0 <= iw < x_shape[2]:
                        cells.append((i, j, ih, iw))
            yield oh, ow, cells


def output_hw(x_shape, window, strides, dilations, padding):
    (out_h, _, _), (out_w, _, _) = _geometry(x_shape, window, strides, dilations, padding)
    return out_h, out_w


def conv2d(x, w, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    out_h, out_w = output_hw(x.shape, w.shape[:2], strides, dilations, padding)
    out = np.zeros((x.shape[0], out_h, out_w, w.shape[3]), dtype=np.float64)
    for oh, ow, cells in _windows(x.shape, w.shape[:2], strides, dilations, padding):
        for i, j, ih, iw in cells:
            out[:, oh, ow, :] += x[:, ih, iw, :] @ w[i, j]
    return out


def conv2d_backprop_input(x_shape, w, dy, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    """Scatters each output's gradient back through the window (the transposed convolution)."""
    dx = np.zeros(x_shape, dtype=np.float64)
    for oh, ow, cells in _windows(x_shape, w.shape[:2], strides, dilations, padding):
        for i, j, ih, iw in cells:
            dx[:, ih, iw, :] += dy[:, oh, ow, :] @ w[i, j].T
    return dx


def conv2d_backprop_filter(x, w_shape, dy, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    dw = np.zeros(w_shape, dtype=np.float64)
    for oh, ow, cells in _windows(x.shape, w_shape[:2], strides, dilations, padding):
        for i, j, ih, iw in cells:
            dw[i, j] += x[:, ih, iw, :].T @ dy[:, oh, ow, :]
    return dw


def depthwise_conv2d(x, w, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    out_h, out_w = output_hw(x.shape, w.shape[:2], strides, dilations, padding)
    channels, multiplier = w.shape[2:]
    out = np.zeros((x.shape[0], out_h, out_w, channels, multiplier), dtype=np.float64)
    for oh, ow, cells in _windows(x.shape, w.shape[:2], strides, dilations, padding):
        for i, j, ih, iw in cells:
            out[:, oh, ow] += x[:, ih, iw, :, None] * w[i, j]
    return out.reshape(x.shape[0], out_h, out_w, channels * multiplier)


def max_pool(x, window, strides, padding):
    out_h, out_w = output_hw(x.shape, window, strides, (1, 1), padding)
    out = np.empty((x.shape[0], out_h, out_w, x.shape[3]), dtype=np.float64)
    for oh, ow, cells in _windows(x.shape, window, strides, (1, 1), padding):
        out[:, oh, ow] = np.max([x[:, ih, iw] for _, _, ih, iw in cells], axis=0)
    return out


def max_pool_grad(x, dy, window, strides, padding):
    """Each window's gradient goes to its first maximal cell in window order."""
    dx = np.zeros(x.shape, dtype=np.float64)
    for oh, ow, cells in _windows(x.shape, window, strides, (1, 1), padding):
        stacked = np.array([x[:, ih, iw] for _, _, ih, iw in cells])  # [cells, N, C]
        first = np.argmax(stacked, axis=0)
        for n in range(x.shape[0]):
            for c in range(x.shape[3]):
                _, _, ih, iw = cells[first[n, c]]
                dx[n, ih, iw, c] += dy[n, oh, ow, c]
    return dx


def max_pool_grad_grad(x, ddx, window, strides, padding):
    out_h, out_w = output_hw(x.shape, window, strides, (1, 1), padding)
    out = np.zeros((x.shape[0], out_h, out_w, x.shape[3]), dtype=np.float64)
    for oh, ow, cells in _windows(x.shape, window, strides, (1, 1), padding):
        stacked = np.array([x[:, ih, iw] for _, _, ih, iw in cells])
        first = np.argmax(stacked, axis=0)
        for n in range(x.shape[0]):
            for c in range(x.shape[3]):
                _, _, ih, iw = cells[first[n, c]]
                out[n, oh, ow, c] = ddx[n, ih, iw, c]
    return out


def avg_pool(x, window, strides, padding):
    out_h, out_w = output_hw(x.shape, window, strides, (1, 1), padding)
    out = np.empty((x.shape[0], out_h, out_w, x.shape[3]), dtype=np.float64)
    for oh, ow, cells in _windows(x.shape, window, strides, (1, 1), padding):
        out[:, oh, ow] = np.mean([x[:, ih, iw] for _, _, ih, iw in cells], axis=0)
    return out


def avg_pool_grad(x_shape, dy, window, strides, padding):
    dx = np.zeros(x_shape, dtype=np.float64)
    for oh, ow, cells in _windows(x_shape, window, strides, (1, 1), padding):
        for _, _, ih, iw in cells:
            dx[:, ih, iw] += dy[:, oh, ow] / len(cells)
    return dx


def nchw(x):
    return np.transpose(x, (0, 3, 1, 2))


def nhwc(x):
    return np.transpose(x, (0, 2, 3, 1))
