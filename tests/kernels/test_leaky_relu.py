"""LeakyRelu and LeakyReluGrad kernels against a NumPy select reference (TF's definition:
x > 0 ? x : alpha * x, and the gradient's g or alpha * g), for alphas inside [0, 1] (the
max / factor path) and outside (the select), with infinities, NaNs and signed zeros, whole and
split over intra-op threads. The op's numeric gradient check is in tests/ops."""
import numpy as np
import pytest

from tensorweave.kernels import activation, intra_op


def _reference(features, gradients, alpha):
    scale = np.asarray(alpha, dtype=features.dtype)
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN in both
        return (np.where(features > 0, features, features * scale),
                np.where(features > 0, gradients, gradients * scale))


def _inputs(dtype, shape=(4, 5, 6, 3)):
    rng = np.random.default_rng(0)
    features = rng.standard_normal(shape).astype(dtype)
    gradients = rng.standard_normal(shape).astype(dtype)
    flat_x, flat_g = features.reshape(-1), gradients.reshape(-1)
    flat_x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30]
    flat_g[6:12] = [np.inf, -np.inf, np.nan, np.inf, -np.inf, np.nan]
    flat_x[6:12] = [-1.0, -2.0, -3.0, 1.0, 2.0, 3.0]
    return features, gradients


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf * 0, on purpose
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("alpha", [0.0, 0.2, 0.01, 1.0, 1.5, -0.3])
@pytest.mark.parametrize("split", [False, True])
def test_leaky_relu_and_its_gradient_match_the_select(monkeypatch, dtype, alpha, split):
    features, gradients = _inputs(dtype)
    previous = intra_op.threads()
    if split:
        intra_op.set_threads(2)
        monkeypatch.setattr(intra_op, "_MIN_CHUNK_ELEMENTS", 1)
    try:
        out = activation.leaky_relu(features, alpha=alpha)
        grad = activation.leaky_relu_grad(gradients, features, alpha=alpha)
    finally:
        intra_op.set_threads(previous)
    expected_out, expected_grad = _reference(features, gradients, alpha)
    assert out.dtype == grad.dtype == dtype
    np.testing.assert_array_equal(out, expected_out)  # exact, NaNs in the same places
    np.testing.assert_array_equal(grad, expected_grad)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(expected_out))


def test_scalars_and_broadcast_gradients_take_the_select():
    assert activation.leaky_relu(np.float32(-2.0), alpha=0.5) == np.float32(-1.0)
    features = np.array([[-1.0, 2.0]], dtype=np.float32)
    grad = activation.leaky_relu_grad(np.ones((3, 2), np.float32), features, alpha=0.25)
    np.testing.assert_array_equal(grad, [[0.25, 1.0]] * 3)
