"""Sum over the leading axes of a large float array (a bias gradient) runs as one BLAS product
(kernels/math.py): the same numbers as np.sum, for every layout and keep_dims."""
import numpy as np
import pytest

from tensorweave.framework import errors
from tensorweave.kernels import math

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("shape,axes", [((64, 1024), [0]), ((8, 50, 64), [0, 1]),
                                        ((8, 50, 64), [0]), ((1, 20000), [0]),
                                        ((8, 50, 64), [1]), ((8, 50, 64), [0, 2])])
@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_matches_numpy(shape, axes, keep_dims, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    got = math._reduction_kernel(math._sum)(x, np.array(axes), keep_dims=keep_dims)
    expected = x.astype(np.float64).sum(axis=tuple(axes), keepdims=keep_dims)
    assert got.dtype == dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-3 if dtype == np.float32 else 1e-10)


def test_sum_of_a_strided_view_and_of_non_finite_values():
    x = np.random.default_rng(1).standard_normal((200, 300)).astype(np.float32)[::2, ::3]
    x[3, 4], x[5, 6] = np.inf, np.nan
    got = math._reduction_kernel(math._sum)(x, np.array([0]), keep_dims=False)
    expected = x.sum(axis=0)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)
    assert np.isinf(got[4]) and np.isnan(got[6])


def test_sum_over_a_bad_axis_is_named():
    with pytest.raises(errors.InvalidArgumentError, match="Invalid reduction dimension 2"):
        math._reduction_kernel(math._sum)(np.ones((128, 256), np.float32), np.array([2]),
                                          keep_dims=False)
