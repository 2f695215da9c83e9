"""SparseCross (tf.sparse.cross / cross_hashed, tf.ragged.cross / cross_hashed) and
tf.sparse.bincount, against itertools/NumPy references."""
import collections
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.string_hash import fingerprint64

COVERED_OP_TYPES = {"SparseCross"}
SPARSE = ([[0, 0], [1, 0], [1, 1], [3, 0]], ["a", "b", "c", "q"], [4, 2])
DENSE = [["d", "e"], ["f", "g"], ["h", "i"], ["j", "k"]]
INTS = [[7], [8], [9], [10]]


def run(fetches):
    with tf.Session() as session:
        return session.run(fetches)


def _rows(indices, values, nrows):
    rows = [[] for _ in range(nrows)]
    for (row, _), value in zip(indices, values):
        rows[row].append(value)
    return rows


def _as_bytes(value):
    return value.encode() if isinstance(value, str) else str(value).encode()


def _fingerprint_cat(first, second):
    """TF's FingerprintCat64, written with NumPy's wrapping uint64 arithmetic."""
    mul = np.uint64(0xC6A4A7935BD1E995)
    with np.errstate(over="ignore"):
        first, second = np.uint64(first), np.uint64(second)
        result = first ^ mul
        mixed = second * mul
        result ^= (mixed ^ (mixed >> np.uint64(47))) * mul
        result *= mul
        result = (result ^ (result >> np.uint64(47))) * mul
        return int(result ^ (result >> np.uint64(47)))


def _expected(columns, hashed=False, num_buckets=0, key=0xDECAFCAFFE):
    out = []
    for row in zip(*columns):
        crosses = []
        for combo in itertools.product(*row):
            if not hashed:
                crosses.append(b"_X_".join(_as_bytes(v) for v in combo))
                continue
            value = key
            for feature in combo:
                feature = fingerprint64(feature.encode()) if isinstance(feature, str) \
                    else feature
                value = _fingerprint_cat(value, feature)
            crosses.append(value % num_buckets if num_buckets else value % (2 ** 63 - 1))
        out.append(crosses)
    return out


def _sparse_rows(value):
    return _rows(value.indices.tolist(), value.values.tolist(), int(value.dense_shape[0]))


def test_string_cross_matches_product():
    sparse = tf.SparseTensor(*SPARSE)
    got = run(tf.sparse.cross([sparse, tf.constant(DENSE), tf.constant(INTS)]))
    columns = [_rows(*SPARSE[:2], 4), DENSE, INTS]
    assert _sparse_rows(got) == _expected(columns)
    assert got.dense_shape.tolist() == [4, 4]


@pytest.mark.parametrize("num_buckets,key", [(0, None), (10, None), (1000, 7)])
def test_hashed_cross_matches_fingerprint_cat(num_buckets, key):
    sparse = tf.SparseTensor(*SPARSE)
    got = run(tf.sparse.cross_hashed([sparse, tf.constant(INTS, tf.int64)], num_buckets, key))
    columns = [_rows(*SPARSE[:2], 4), INTS]
    expected = _expected(columns, True, num_buckets, 0xDECAFCAFFE if key is None else key)
    assert _sparse_rows(got) == expected
    assert all(0 <= v < (num_buckets or 2 ** 63) for v in got.values.tolist())


def test_ragged_cross_and_errors():
    ragged = tf.ragged.constant([["a"], ["b", "c"], []])
    dense = tf.constant([["x"], ["y"], ["z"]])
    assert run(tf.ragged.cross([ragged, dense])).to_list() == [[b"a_X_x"],
                                                               [b"b_X_y", b"c_X_y"], []]
    hashed = run(tf.ragged.cross_hashed([ragged, dense], num_buckets=50)).to_list()
    assert hashed == _expected([[["a"], ["b", "c"], []], [["x"], ["y"], ["z"]]], True, 50)
    with pytest.raises(TypeError, match="int64, int32 or string"):
        tf.sparse.cross([tf.constant([[1.0]])])
    with pytest.raises(ValueError, match="must be 2-D"):
        tf.sparse.cross([tf.constant(["a"])])
    with pytest.raises(TypeError, match="non-empty list"):
        tf.sparse.cross([])


@pytest.mark.parametrize("axis", [0, -1])
def test_bincount_matches_numpy(axis):
    rng = np.random.default_rng(4)
    data = rng.integers(0, 12, (3, 7))
    weights = rng.standard_normal((3, 7))
    for kwargs in ({}, {"minlength": 20}, {"maxlength": 6}, {"binary_output": True},
                   {"weights": weights}):
        got = run(tf.sparse.bincount(data, axis=axis, **kwargs))
        size = max(data.max() + 1, kwargs.get("minlength", 0))
        size = min(size, kwargs.get("maxlength", size))
        rows = data.reshape(1, -1) if axis == 0 else data
        wrows = None if "weights" not in kwargs else (
            weights.reshape(1, -1) if axis == 0 else weights)
        dense = np.zeros((rows.shape[0], size))
        for r, row in enumerate(rows):
            for k, value in enumerate(row):
                if value < size:
                    dense[r, value] += 1 if wrows is None else wrows[r, k]
        if kwargs.get("binary_output"):
            dense = (dense > 0).astype(float)
        back = np.zeros(got.dense_shape)
        back[tuple(got.indices.T)] = got.values
        np.testing.assert_allclose(back, dense[0] if axis == 0 else dense)
        assert got.dense_shape.tolist() == ([size] if axis == 0 else [3, size])


def test_bincount_of_sparse_and_ragged_inputs():
    sparse = tf.SparseTensor([[0, 1], [1, 0], [1, 3]], tf.constant([4, 4, 2], tf.int64), [2, 5])
    got = run(tf.sparse.bincount(sparse, axis=-1))
    assert got.indices.tolist() == [[0, 4], [1, 2], [1, 4]] and got.values.tolist() == [1, 1, 1]
    ragged = run(tf.sparse.bincount(tf.ragged.constant([[1, 1], [], [3]])))
    counts = collections.Counter([1, 1, 3])
    assert dict(zip(ragged.indices[:, 0].tolist(), ragged.values.tolist())) == counts
    with pytest.raises(ValueError, match="axis must be 0 or -1"):
        tf.sparse.bincount([1], axis=1)
    with pytest.raises(TypeError, match="must be integers"):
        tf.sparse.bincount([1.0])
