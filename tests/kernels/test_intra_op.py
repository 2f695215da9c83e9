"""Intra-op splitting (kernels/intra_op.py): the chunk runner itself, and every kernel that splits
its work (batch chunks over threads, image blocks for cache, blocked optimizer updates) against
independent NumPy references with the split forced on small shapes."""
import queue
import threading

import numpy as np
import pytest

from tensorweave.kernels import conv, conv_input_grad, intra_op, nn, training
from tests.ops import conv_reference as ref

pytestmark = pytest.mark.timeout(120)

CONV = {"data_format": "NHWC", "dilations": [1, 1, 1, 1], "explicit_paddings": []}


@pytest.fixture
def split_everything(monkeypatch):
    """Two intra-op threads, and thresholds low enough that test-sized kernels split into
    several chunks and image blocks."""
    previous = intra_op.threads()
    intra_op.set_threads(2)
    monkeypatch.setattr(conv, "_MIN_CHUNK_FLOPS", 1)
    monkeypatch.setattr(conv, "_BLOCK_FLOATS", 500)
    monkeypatch.setattr(intra_op, "_MIN_CHUNK_ELEMENTS", 1)
    monkeypatch.setattr(training, "_BLOCK", 7)
    chunk_counts = []  # how many chunks each run_chunks call had: the tests check they split
    run_chunks = intra_op.run_chunks

    def counting_run_chunks(fn, bounds):
        chunk_counts.append(len(bounds))
        return run_chunks(fn, bounds)

    monkeypatch.setattr(intra_op, "run_chunks", counting_run_chunks)
    yield chunk_counts
    intra_op.set_threads(previous)


# --- the chunk runner ----------------------------------------------------------------------------
def test_split_covers_the_range_in_order():
    assert intra_op.split(10, 3) == [(0, 4), (4, 8), (8, 10)]
    assert intra_op.split(10, 2, multiple=4) == [(0, 8), (8, 10)]
    assert intra_op.split(1, 4) == [(0, 1)]
    assert intra_op.split(0, 2) == []


def test_run_chunks_returns_results_in_chunk_order(split_everything):
    seen = set()

    def chunk(lo, hi):
        seen.add(threading.current_thread().name)
        return list(range(lo, hi))

    results = intra_op.run_chunks(chunk, intra_op.split(100, 5))
    assert sum(results, []) == list(range(100))


def test_a_failing_chunk_raises_after_all_chunks_finished(split_everything):
    finished = []

    def chunk(lo, hi):
        if lo == 0:
            raise ValueError("chunk 0 failed")
        finished.append(lo)

    with pytest.raises(ValueError, match="chunk 0 failed"):
        intra_op.run_chunks(chunk, intra_op.split(4, 4))
    assert sorted(finished) == [1, 2, 3]


def test_the_caller_runs_every_chunk_when_no_helper_comes(split_everything, monkeypatch):
    # Helpers that never read the queue stand for a pool busy with other work: the caller must
    # take the chunks back instead of waiting for them.
    monkeypatch.setattr(intra_op, "_work", queue.SimpleQueue())
    monkeypatch.setattr(intra_op, "_ensure_helpers", lambda count: None)
    caller = threading.current_thread().name
    threads = intra_op.run_chunks(lambda lo, hi: threading.current_thread().name,
                                  intra_op.split(8, 4))
    assert threads == [caller] * 4


def test_one_thread_never_splits():
    previous = intra_op.threads()
    intra_op.set_threads(1)
    try:
        names = intra_op.run_chunks(lambda lo, hi: threading.current_thread().name,
                                    [(0, 1), (1, 2)])
        assert names == [threading.current_thread().name] * 2
    finally:
        intra_op.set_threads(previous)


# --- kernels, split -------------------------------------------------------------------------------
def _random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# (x shape, filter shape, strides, padding): C=1 takes the im2col path, C=3 the row path.
CONV_CASES = [((5, 9, 8, 1), (5, 5, 1, 6), 1, "SAME"),
              ((5, 9, 8, 3), (3, 5, 3, 4), 1, "SAME"),
              ((4, 9, 7, 3), (3, 3, 3, 2), 2, "VALID"),
              ((3, 8, 8, 2), (2, 2, 2, 5), 2, "SAME")]


@pytest.mark.parametrize("x_shape,w_shape,stride,padding", CONV_CASES)
def test_split_convolution_and_its_gradients_match_the_reference(split_everything, x_shape,
                                                                  w_shape, stride, padding):
    x, w = _random(x_shape, 1), _random(w_shape, 2)
    attrs = dict(CONV, strides=[1, stride, stride, 1], padding=padding)
    expected = ref.conv2d(x, w, (stride, stride), padding)
    out = conv.conv2d(x, w, **attrs)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    dy = _random(expected.shape, 3)
    dw = conv.conv2d_backprop_filter(x, np.array(w_shape), dy, **attrs)
    np.testing.assert_allclose(dw, ref.conv2d_backprop_filter(x, w_shape, dy, (stride, stride),
                                                              padding), rtol=1e-4, atol=1e-4)
    dx = conv_input_grad.conv2d_backprop_input(np.array(x_shape), w, dy, **attrs)
    np.testing.assert_allclose(dx, ref.conv2d_backprop_input(x_shape, w, dy, (stride, stride),
                                                             padding), rtol=1e-4, atol=1e-4)
    assert dw.dtype == dx.dtype == np.float32
    assert min(split_everything) > 1


@pytest.mark.parametrize("window,stride,padding", [(2, 2, "SAME"), (3, 2, "SAME"),
                                                   (2, 2, "VALID")])
def test_split_max_pooling_and_its_gradient_match_the_reference(split_everything, window, stride,
                                                                 padding):
    x = np.round(_random((5, 8, 6, 3), 4) * 2)  # rounded: ties go to the first cell
    attrs = {"ksize": [1, window, window, 1], "strides": [1, stride, stride, 1],
             "padding": padding, "data_format": "NHWC"}
    y = nn.max_pool(x, **attrs)
    np.testing.assert_array_equal(y, ref.max_pool(x, (window,) * 2, (stride,) * 2, padding))
    dy = _random(y.shape, 5)
    np.testing.assert_allclose(nn.max_pool_grad(x, y, dy, **attrs),
                               ref.max_pool_grad(x, dy, (window,) * 2, (stride,) * 2, padding),
                               rtol=1e-5, atol=1e-6)
    assert min(split_everything) > 1


def test_split_relu_bias_add_and_gradients_match_numpy(split_everything):
    x, g = _random((6, 4, 3, 5), 6), _random((6, 4, 3, 5), 7)
    bias = _random((5,), 8)
    np.testing.assert_array_equal(nn.relu(x), np.maximum(x, 0))
    np.testing.assert_array_equal(nn.relu_grad(g, x), np.where(x > 0, g, 0))
    np.testing.assert_array_equal(nn.bias_add(x, bias, data_format="NHWC"), x + bias)
    nchw_bias = _random((4,), 9)
    np.testing.assert_array_equal(nn.bias_add(x, nchw_bias, data_format="NCHW"),
                                  x + nchw_bias[:, None, None])
    np.testing.assert_allclose(nn.bias_add_grad(g, data_format="NHWC"),
                               g.astype(np.float64).sum(axis=(0, 1, 2)), rtol=1e-5)
    assert len(split_everything) == 5 and min(split_everything) > 1


def test_relu_grad_keeps_a_nan_gradient_where_the_feature_is_positive_only():
    g = np.array([np.nan, np.nan, 1.0], dtype=np.float32)
    f = np.array([1.0, -1.0, 2.0], dtype=np.float32)
    out = nn.relu_grad(g, f)
    assert np.isnan(out[0]) and out[2] == 1.0 and out.dtype == np.float32


class _Cell:
    def __init__(self, value):
        self.value, self.name = value, "cell"

    def read(self):
        return self.value


@pytest.mark.parametrize("nesterov", [False, True])
def test_blocked_split_momentum_update_matches_the_formula(split_everything, nesterov):
    var, accum, grad = _random((9, 11), 10), _random((9, 11), 11), _random((9, 11), 12)
    lr, momentum = np.array(0.1, np.float32), np.array(0.9, np.float32)
    expected_accum = accum * momentum + grad
    step = (grad + expected_accum * momentum) if nesterov else expected_accum
    expected_var = var - step * lr
    var_cell, accum_cell = _Cell(var.copy()), _Cell(accum.copy())
    out = training.apply_momentum(var_cell, accum_cell, lr, grad, momentum, use_locking=False,
                                  use_nesterov=nesterov)
    assert out is var_cell.value  # updated in place
    np.testing.assert_allclose(accum_cell.value, expected_accum, rtol=1e-6)
    np.testing.assert_allclose(var_cell.value, expected_var, rtol=1e-6, atol=1e-7)
    assert var_cell.value.dtype == np.float32
    assert len(split_everything) == 1 and split_everything[0] > 1


@pytest.mark.parametrize("nesterov", [False, True])
def test_blocked_split_adam_update_matches_the_formula(split_everything, nesterov):
    var, m, grad = _random((9, 11), 13), _random((9, 11), 14), _random((9, 11), 15)
    v = np.abs(_random((9, 11), 16))
    f32 = np.float32
    beta1_power, beta2_power = f32(0.9 ** 3), f32(0.999 ** 3)
    lr, beta1, beta2, epsilon = f32(0.01), f32(0.9), f32(0.999), f32(1e-7)
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m_new = beta1 * m.astype(np.float64) + (1 - beta1) * grad
    v_new = beta2 * v.astype(np.float64) + (1 - beta2) * grad * grad
    numer = beta1 * m_new + (1 - beta1) * grad if nesterov else m_new
    expected_var = var - lr_t * numer / (np.sqrt(v_new) + epsilon)
    cells = [_Cell(var.copy()), _Cell(m.copy()), _Cell(v.copy())]
    out = training.apply_adam(*cells, *[np.array(x) for x in (beta1_power, beta2_power, lr, beta1,
                                                              beta2, epsilon)],
                              grad, use_locking=False, use_nesterov=nesterov)
    assert out is cells[0].value and out.dtype == np.float32
    np.testing.assert_allclose(cells[1].value, m_new, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cells[2].value, v_new, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cells[0].value, expected_var, rtol=1e-5, atol=1e-6)
    assert len(split_everything) == 1 and split_everything[0] > 1


def _blocked_update_case(kernel, slot_values, hyper, split_counts):
    """Runs `kernel` blocked and split on [9, 11] float32 operands and whole (one thread, no
    blocks) on copies; returns (blocked, whole) lists of [var, *slots] after the update."""
    var, grad = _random((9, 11), 20), _random((9, 11), 21)
    cells = [_Cell(var.copy())] + [_Cell(s.copy()) for s in slot_values]
    out = kernel(*cells, *hyper, grad, use_locking=False)
    assert out is cells[0].value and out.dtype == np.float32
    assert len(split_counts) == 1 and split_counts[0] > 1
    return [c.value for c in cells], var, grad


def test_blocked_split_adagrad_matches_the_formula(split_everything):
    accum = np.abs(_random((9, 11), 22)) + 0.1
    lr = np.array(0.1, np.float32)
    (var_new, accum_new), var, grad = _blocked_update_case(
        lambda v, a, lr, g, **kw: training.apply_adagrad(v, a, lr, g, update_slots=True, **kw),
        [accum], [lr], split_everything)
    expected_accum = accum.astype(np.float64) + grad.astype(np.float64) ** 2
    np.testing.assert_allclose(accum_new, expected_accum, rtol=1e-6)
    np.testing.assert_allclose(var_new, var - 0.1 * grad / np.sqrt(expected_accum), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("centered", [False, True])
def test_blocked_split_rms_prop_matches_the_formula(split_everything, centered):
    ms, mom, mg = np.abs(_random((9, 11), 23)) + 0.5, _random((9, 11), 24), _random((9, 11), 25)
    lr, rho, momentum, epsilon = (np.array(x, np.float32) for x in (0.01, 0.9, 0.5, 1e-6))
    kernel = training.apply_centered_rms_prop if centered else training.apply_rms_prop
    slots = [mg * 0.1, ms, mom] if centered else [ms, mom]
    updated, var, grad = _blocked_update_case(kernel, slots, [lr, rho, momentum, epsilon],
                                              split_everything)
    g = grad.astype(np.float64)
    ms_new = 0.9 * ms + 0.1 * g * g
    denominator = ms_new + 1e-6
    if centered:
        mg_new = 0.9 * (mg * 0.1) + 0.1 * g
        np.testing.assert_allclose(updated[1], mg_new, rtol=1e-5, atol=1e-6)
        denominator = denominator - mg_new ** 2
    mom_new = 0.5 * mom + 0.01 * g / np.sqrt(denominator)
    np.testing.assert_allclose(updated[-2], ms_new, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(updated[-1], mom_new, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(updated[0], var - mom_new, rtol=1e-5, atol=1e-6)
