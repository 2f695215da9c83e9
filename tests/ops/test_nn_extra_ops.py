"""tf.nn.pool, fractional max/avg pooling (values from their own cut sequences, region rules,
numeric gradients), the experimental dropouts, tf.extract_volume_patches,
tf.matrix_square_root and tf.random_index_shuffle, against NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

COVERED_OP_TYPES = {"FractionalMaxPool", "FractionalAvgPool", "FractionalMaxPoolGrad",
                    "FractionalAvgPoolGrad", "RandomIndexShuffle"}
RNG = np.random.default_rng(11)


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def _pool_reference(x, window, kind, strides, rates, padding):
    """Channels-last N-D pooling, windows of taps i * stride + k * rate (VALID), or SAME
    without dilation (cells outside skipped)."""
    spatial = x.shape[1:-1]
    reduce = np.max if kind == "MAX" else np.mean
    starts, outs = [], []
    for size, w, s, r in zip(spatial, window, strides, rates):
        span = (w - 1) * r + 1
        if padding == "SAME":
            out = -(-size // s)
            before = max((out - 1) * s + span - size, 0) // 2
        else:
            out, before = (size - span) // s + 1, 0
        outs.append(out)
        starts.append([i * s - before for i in range(out)])
    result = np.zeros((x.shape[0], *outs, x.shape[-1]))
    for position in np.ndindex(*outs):
        taps = [[starts[a][position[a]] + k * rates[a] for k in range(window[a])]
                for a in range(len(window))]
        taps = [[t for t in axis if 0 <= t < spatial[a]] for a, axis in enumerate(taps)]
        block = x[(slice(None), *np.ix_(*taps), slice(None))] if len(taps) > 1 else \
            x[:, taps[0], :]
        result[(slice(None), *position, slice(None))] = reduce(
            block.reshape(x.shape[0], -1, x.shape[-1]), axis=1)
    return result


@pytest.mark.parametrize("shape,window,kind,strides,rates,padding", [
    ((2, 9, 3), [3], "MAX", [2], [1], "VALID"),
    ((2, 7, 6, 2), [2, 3], "AVG", [2, 1], [1, 1], "SAME"),
    ((1, 4, 5, 6, 2), [2, 2, 3], "MAX", [1, 2, 2], [1, 1, 1], "VALID"),
    ((2, 9, 8, 2), [2, 3], "MAX", [1, 1], [2, 2], "VALID"),
    ((2, 10, 3), [3], "AVG", [1], [3], "VALID"),
])
def test_pool_against_numpy(shape, window, kind, strides, rates, padding):
    x = RNG.normal(size=shape)
    with tf.Graph().as_default():
        out = tf.nn.pool(tf.constant(x), window, kind, padding, dilation_rate=rates,
                         strides=strides)
        got = _run(out)
    np.testing.assert_allclose(got, _pool_reference(x, window, kind, strides, rates, padding),
                               rtol=1e-12)
    gradient_checker.check_gradients(
        lambda t: tf.nn.pool(t, window, kind, padding, dilation_rate=rates, strides=strides),
        [x])


def test_pool_rejects_strides_with_dilation_and_channels_first_matches():
    with tf.Graph().as_default():
        x = RNG.normal(size=(1, 6, 6, 2))
        with pytest.raises(ValueError, match="dilation_rate"):
            tf.nn.pool(tf.constant(x), [2, 2], "MAX", "VALID", dilation_rate=[2, 2],
                       strides=[2, 2])
        last = tf.nn.pool(tf.constant(x), [2, 2], "AVG", "VALID", strides=[2, 2])
        first = tf.nn.pool(tf.constant(x.transpose(0, 3, 1, 2)), [2, 2], "AVG", "VALID",
                           strides=[2, 2], data_format="NCHW")
        got_last, got_first = _run([last, first])
    np.testing.assert_allclose(got_first.transpose(0, 2, 3, 1), got_last)


def _regions(sequence, size, overlapping):
    return [(a, min(b + 1, size) if overlapping else b)
            for a, b in zip(sequence[:-1], sequence[1:])]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("pseudo_random,overlapping", [(False, False), (True, True)])
def test_fractional_pool_values_sequences_and_gradients(kind, pseudo_random, overlapping):
    x = RNG.normal(size=(2, 10, 7, 3))
    pool = tf.nn.fractional_max_pool if kind == "max" else tf.nn.fractional_avg_pool
    reduce = np.max if kind == "max" else np.mean
    with tf.Graph().as_default():
        result = pool(tf.constant(x), [1.0, 1.44, 1.73, 1.0], pseudo_random=pseudo_random,
                      overlapping=overlapping, deterministic=True, seed=3, seed2=5)
        out, rows, cols = _run(list(result))
    assert out.shape == (2, 6, 4, 3)  # floor(10 / 1.44), floor(7 / 1.73)
    for sequence, size, count in ((rows, 10, 6), (cols, 7, 4)):
        steps = np.diff(sequence)
        assert sequence[0] == 0 and sequence[-1] == size and len(steps) == count
        assert set(steps) <= {size // count, size // count + 1}
    for i, (r0, r1) in enumerate(_regions(rows, 10, overlapping)):
        for j, (c0, c1) in enumerate(_regions(cols, 7, overlapping)):
            np.testing.assert_allclose(out[:, i, j], reduce(x[:, r0:r1, c0:c1], axis=(1, 2)))
    gradient_checker.check_gradients(
        lambda t: pool(t, [1.0, 1.44, 1.73, 1.0], pseudo_random=pseudo_random,
                       overlapping=overlapping, deterministic=True, seed=3, seed2=5)[0], [x])


def test_fractional_pool_draws_anew_unless_deterministic():
    with tf.Graph().as_default():
        x = tf.constant(RNG.normal(size=(1, 40, 40, 1)))
        free = tf.nn.fractional_max_pool(x, [1.0, 1.5, 1.5, 1.0], seed=1, seed2=2)
        fixed = tf.nn.fractional_max_pool(x, [1.0, 1.5, 1.5, 1.0], deterministic=True,
                                          seed=1, seed2=2)
        with tf.Session() as sess:
            free_rows = [sess.run(free.row_pooling_sequence) for _ in range(4)]
            fixed_rows = [sess.run(fixed.row_pooling_sequence) for _ in range(4)]
        with pytest.raises(ValueError, match="pooling_ratio"):
            tf.nn.fractional_avg_pool(x, [2.0, 1.5, 1.5, 1.0])
    assert any(not np.array_equal(free_rows[0], r) for r in free_rows[1:])
    assert all(np.array_equal(fixed_rows[0], r) for r in fixed_rows[1:])


def test_stateless_and_general_dropout():
    x = RNG.uniform(1, 2, size=(50, 40))
    with tf.Graph().as_default():
        seed = tf.constant([7, 9], tf.int64)
        a = tf.nn.experimental.stateless_dropout(tf.constant(x), 0.3, seed)
        b = tf.nn.experimental.stateless_dropout(tf.constant(x), 0.3, seed)
        draws = tf.random.stateless_uniform(x.shape, seed, dtype=tf.float64)
        ramp = tf.nn.experimental.general_dropout(
            tf.constant(x), 0.5,
            lambda shape, dtype: tf.reshape(tf.cast(tf.range(2000), dtype) / 2000.0, shape))
        got_a, got_b, got_draws, got_ramp = _run([a, b, draws, ramp])
    np.testing.assert_array_equal(got_a, got_b)  # a pure function of the seed
    np.testing.assert_allclose(got_a, np.where(got_draws >= 0.3, x / 0.7, 0.0))
    assert 0.25 < np.mean(got_a == 0) < 0.35
    np.testing.assert_allclose(got_ramp.reshape(-1)[:1000], 0.0)
    np.testing.assert_allclose(got_ramp.reshape(-1)[1000:], x.reshape(-1)[1000:] * 2)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="rate"):
        tf.nn.experimental.stateless_dropout(tf.constant(x), 1.5, [1, 2])


def _volume_patches_reference(x, k, s, padding):
    if padding == "SAME":
        pads = []
        for size, kk, ss in zip(x.shape[1:4], k, s):
            out = -(-size // ss)
            total = max((out - 1) * ss + kk - size, 0)
            pads.append((total // 2, total - total // 2))
        x = np.pad(x, [(0, 0), *pads, (0, 0)])
    outs = [(size - kk) // ss + 1 for size, kk, ss in zip(x.shape[1:4], k, s)]
    result = np.zeros((x.shape[0], *outs, k[0] * k[1] * k[2] * x.shape[4]))
    for p, r, c in np.ndindex(*outs):
        block = x[:, p * s[0]:p * s[0] + k[0], r * s[1]:r * s[1] + k[1],
                  c * s[2]:c * s[2] + k[2], :]
        result[:, p, r, c] = block.reshape(x.shape[0], -1)
    return result


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_extract_volume_patches(padding):
    x = RNG.normal(size=(2, 4, 5, 5, 2))
    k, s = [2, 3, 2], [1, 2, 2]
    with tf.Graph().as_default():
        got = _run(tf.extract_volume_patches(tf.constant(x), [1, *k, 1], [1, *s, 1], padding))
        as_int = _run(tf.extract_volume_patches(tf.constant(np.arange(8).reshape(1, 2, 2, 2, 1)),
                                                [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"))
    np.testing.assert_allclose(got, _volume_patches_reference(x, k, s, padding))
    assert as_int.dtype == np.int64 and as_int.reshape(-1).tolist() == list(range(8))
    gradient_checker.check_gradients(
        lambda t: tf.extract_volume_patches(t, [1, *k, 1], [1, *s, 1], padding), [x])


def test_matrix_square_root_value_and_gradient():
    a = RNG.normal(size=(3, 3))
    spd = a @ a.T + 3 * np.eye(3)
    with tf.Graph().as_default():
        root = _run(tf.matrix_square_root(tf.constant(spd)))
    np.testing.assert_allclose(root @ root, spd, rtol=1e-10)
    gradient_checker.check_gradients(tf.matrix_square_root, [spd])


def test_random_index_shuffle_is_a_seeded_bijection():
    with tf.Graph().as_default():
        index = tf.range(1000, dtype=tf.int64)
        a = tf.random_index_shuffle(index, [1, 2, 3], 999)
        again = tf.random_index_shuffle(index, [1, 2, 3], 999)
        other = tf.random_index_shuffle(index, [1, 2, 4], 999)
        small = tf.random_index_shuffle(tf.range(5, dtype=tf.int32), tf.constant([4, 5, 6]),
                                        [4, 4, 4, 4, 4])
        got, got_again, got_other, got_small = _run([a, again, other, small])
        with pytest.raises(tf.errors.InvalidArgumentError, match="max_index"):
            _run(tf.random_index_shuffle(7, [1, 2, 3], 3))
        with pytest.raises(ValueError, match="seed"):
            tf.random_index_shuffle(1, [1, 2], 3)
    assert sorted(got.tolist()) == list(range(1000)) and got.dtype == np.int64
    np.testing.assert_array_equal(got, got_again)
    assert np.mean(got != got_other) > 0.9 and np.mean(got != np.arange(1000)) > 0.9
    assert sorted(got_small.tolist()) == list(range(5))
