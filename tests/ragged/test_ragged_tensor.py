"""tf.RaggedTensor: factories, the row partition, conversions, against Python references."""
import numpy as np
import pytest

import tensorweave as tf
from tests.ragged.reference import flat_of, random_rows, sparse_entries, splits_of, to_dense

ROWS = [[1.0, 2.0, 3.0], [], [4.0], [5.0, 6.0]]
NESTED = [[[1, 2], [3]], [], [[4, 5, 6], [], [7]]]


def run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


FACTORIES = [
    ("row_splits", lambda v: tf.RaggedTensor.from_row_splits(v, [0, 3, 3, 4, 6])),
    ("row_lengths", lambda v: tf.RaggedTensor.from_row_lengths(v, [3, 0, 1, 2])),
    ("value_rowids", lambda v: tf.RaggedTensor.from_value_rowids(v, [0, 0, 0, 2, 3, 3])),
    ("value_rowids+nrows", lambda v: tf.RaggedTensor.from_value_rowids(v, [0, 0, 0, 2, 3, 3],
                                                                       nrows=4)),
    ("row_starts", lambda v: tf.RaggedTensor.from_row_starts(v, [0, 3, 3, 4])),
    ("row_limits", lambda v: tf.RaggedTensor.from_row_limits(v, [3, 3, 4, 6])),
]


@pytest.mark.parametrize("name,factory", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories_partition_values_into_rows(name, factory):
    rt = factory(tf.constant(flat_of(ROWS), tf.float64))
    assert rt.ragged_rank == 1 and rt.dtype == tf.float64
    assert run(rt).to_list() == ROWS


def test_trailing_empty_rows_need_nrows():
    rt = tf.RaggedTensor.from_value_rowids([1, 2], [0, 0], nrows=3)
    assert run(rt).to_list() == [[1, 2], [], []]


def test_nested_factories_agree():
    flat = tf.constant([1, 2, 3, 4, 5, 6, 7])
    by_splits = tf.RaggedTensor.from_nested_row_splits(flat, [[0, 2, 2, 5], [0, 2, 3, 6, 6, 7]])
    by_lengths = tf.RaggedTensor.from_nested_row_lengths(flat, [[2, 0, 3], [2, 1, 3, 0, 1]])
    by_rowids = tf.RaggedTensor.from_nested_value_rowids(
        flat, [[0, 0, 2, 2, 2], [0, 0, 1, 2, 2, 2, 4]], nested_nrows=[3, 5])
    inner = tf.ragged.constant([[1, 2], [3], [4, 5, 6], [], [7]])
    by_ragged_values = tf.RaggedTensor.from_row_starts(
        tf.RaggedTensor.from_row_splits(inner, [0, 2, 2, 5]).values, [0, 2, 2])
    for rt in (by_splits, by_lengths, by_rowids, by_ragged_values):
        assert rt.ragged_rank == 2
        assert run(rt).to_list() == NESTED


@pytest.mark.parametrize("splits", [[1, 3, 6], [0, 4, 3, 6], [0, 3, 5]])
def test_invalid_row_splits_are_clear_errors(splits):
    # Constant splits may fail when the graph is built (a static check), fed ones when run.
    with pytest.raises(tf.errors.InvalidArgumentError, match="row_split"):
        run(tf.RaggedTensor.from_row_splits(tf.constant([1, 2, 3, 4, 5, 6]), splits))
    fed = tf.placeholder(tf.int64, [None])
    rt = tf.RaggedTensor.from_row_splits(tf.constant([1, 2, 3, 4, 5, 6]), fed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="row_split"):
        run(rt, {fed: splits})


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="private"):
        tf.RaggedTensor(tf.constant([1]), tf.constant([0, 1], tf.int64))
    with pytest.raises(TypeError, match="row_splits must be int32 or int64"):
        tf.RaggedTensor.from_row_splits([1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="values must have rank >= 1"):
        tf.RaggedTensor.from_row_splits(3.0, [0, 1])
    with pytest.raises(ValueError, match="lengths or padding"):
        tf.RaggedTensor.from_tensor([[1]], lengths=[1], padding=0)
    with pytest.raises(ValueError, match="row_lengths: axis 0"):
        tf.ragged.constant([[1]]).row_lengths(axis=0)


def test_row_partition_accessors_match_numpy():
    rng = np.random.default_rng(1)
    rows = random_rows(rng, 7)
    splits = splits_of(rows)
    rt = tf.RaggedTensor.from_row_splits(tf.constant(flat_of(rows), tf.float64), splits)
    got = run([rt.row_splits, rt.row_lengths(), rt.value_rowids(), rt.nrows(), rt.row_starts(),
               rt.row_limits(), rt.bounding_shape(), rt.flat_values, rt.nested_row_lengths()])
    lengths = np.diff(splits)
    np.testing.assert_array_equal(got[0], splits)
    np.testing.assert_array_equal(got[1], lengths)
    np.testing.assert_array_equal(got[2], np.repeat(np.arange(7), lengths))
    assert got[3] == 7
    np.testing.assert_array_equal(got[4], splits[:-1])
    np.testing.assert_array_equal(got[5], splits[1:])
    np.testing.assert_array_equal(got[6], [7, lengths.max()])
    np.testing.assert_allclose(got[7], flat_of(rows))
    np.testing.assert_array_equal(got[8][0], lengths)
    assert rt.shape.as_list() == [7, None]
    assert rt.row_splits.dtype == tf.int64


def test_nested_accessors_and_static_shape():
    rt = tf.ragged.constant(NESTED)
    assert rt.ragged_rank == 2 and len(rt.nested_row_splits) == 2
    assert rt.shape.as_list() == [3, None, None]
    inner_lengths = run(rt.row_lengths(axis=2))
    assert inner_lengths.to_list() == [[2, 1], [], [3, 0, 1]]
    np.testing.assert_array_equal(run(rt.bounding_shape()), [3, 3, 3])
    assert run(rt.bounding_shape(axis=1)) == 3
    assert isinstance(rt.values, tf.RaggedTensor)


def test_empty_ragged_tensor():
    rt = tf.ragged.constant([], ragged_rank=1, inner_shape=())
    assert run(rt).to_list() == []
    np.testing.assert_array_equal(run(rt.bounding_shape()), [0, 0])
    assert run(rt.to_tensor()).shape == (0, 0)


# --- to_tensor / from_tensor ---------------------------------------------------------------
@pytest.mark.parametrize("nested,default", [
    (ROWS, None), (ROWS, -1.5), (NESTED, None), (NESTED, 9), ([[], []], None),
    ([[b"a", b"bc"], [], [b"d"]], None), ([[b"a", b"bc"], [], [b"d"]], b"pad")])
def test_to_tensor_pads_to_the_bounding_box(nested, default):
    rt = tf.ragged.constant(nested)
    fill = default if default is not None else b"" if rt.dtype == tf.string else 0
    expected = to_dense(nested, fill)
    got = run(rt.to_tensor(default_value=default))
    assert got.shape == expected.shape
    assert got.tolist() == expected.tolist()


def test_to_tensor_keeps_inner_dimensions():
    rows = [[[1.0, 2.0], [3.0, 4.0]], [], [[5.0, 6.0]]]
    rt = tf.ragged.constant(rows, ragged_rank=1)
    assert rt.shape.as_list() == [3, None, 2]
    got = run(rt.to_tensor(default_value=[7.0, 8.0]))
    expected = np.array([[[1, 2], [3, 4]], [[7, 8], [7, 8]], [[5, 6], [7, 8]]], np.float32)
    np.testing.assert_array_equal(got, expected)


def test_from_tensor_plain_lengths_padding_and_ragged_rank():
    dense = np.array([[1, 2, 0, 0], [3, 0, 4, 0], [0, 0, 0, 0]], np.int32)
    cases = [
        (tf.RaggedTensor.from_tensor(dense), dense.tolist()),
        (tf.RaggedTensor.from_tensor(dense, lengths=[1, 3, 5]), [[1], [3, 0, 4], [0, 0, 0, 0]]),
        (tf.RaggedTensor.from_tensor(dense, padding=0), [[1, 2], [3, 0, 4], []]),
    ]
    for rt, expected in cases:
        assert run(rt).to_list() == expected
    cube = np.arange(24).reshape(2, 3, 4) % 5
    rt2 = tf.RaggedTensor.from_tensor(cube, padding=0, ragged_rank=2)
    assert rt2.ragged_rank == 2
    expected = [[list(np.trim_zeros(row, "b")) for row in block] for block in cube]
    assert run(rt2).to_list() == [[[int(v) for v in r] for r in b] for b in expected]


def test_from_tensor_padding_compares_whole_cells():
    dense = np.array([[[1, 1], [0, 0], [0, 0]], [[0, 0], [2, 0], [0, 0]]], np.int32)
    rt = tf.RaggedTensor.from_tensor(dense, padding=[0, 0])
    assert run(rt).to_list() == [[[1, 1]], [[0, 0], [2, 0]]]
    with pytest.raises(ValueError, match="padding must have the shape of one cell"):
        tf.RaggedTensor.from_tensor(dense, padding=[0, 0, 0])


# --- sparse ----------------------------------------------------------------------------------
@pytest.mark.parametrize("nested", [ROWS, NESTED, [[], [1]], [[[1.0, 2.0]], [[3.0]]]])
def test_to_sparse_lists_every_element_row_major(nested):
    rt = tf.ragged.constant(nested)
    value = run(rt.to_sparse())
    entries = sparse_entries(nested)
    assert [tuple(i) for i in value.indices.tolist()] == [e[0] for e in entries]
    assert value.values.tolist() == [e[1] for e in entries]
    np.testing.assert_array_equal(value.dense_shape, to_dense(nested).shape)


def test_to_sparse_with_inner_dense_dimensions():
    rt = tf.ragged.constant([[[1, 2]], [], [[3, 4], [5, 6]]], ragged_rank=1)
    value = run(rt.to_sparse())
    dense = np.zeros(value.dense_shape, np.int32)
    dense[tuple(value.indices.T)] = value.values
    np.testing.assert_array_equal(dense, run(rt.to_tensor()))
    assert len(value.values) == 6


def test_from_sparse_packs_each_row():
    st = tf.SparseTensor([[0, 0], [0, 3], [2, 1], [2, 2]], [1.0, 2.0, 3.0, 4.0], [4, 5])
    assert run(tf.RaggedTensor.from_sparse(st)).to_list() == [[1.0, 2.0], [], [3.0, 4.0], []]
    value = tf.SparseTensorValue(np.array([[1, 0]]), np.array([5]), np.array([2, 1]))
    assert run(tf.RaggedTensor.from_sparse(value)).to_list() == [[], [5]]
    with pytest.raises(ValueError, match="only 2-D"):
        tf.RaggedTensor.from_sparse(tf.SparseTensor([[0, 0, 0]], [1], [1, 1, 1]))
    with pytest.raises(TypeError, match="expected a SparseTensor"):
        tf.RaggedTensor.from_sparse([[1]])


def test_sparse_round_trip_of_random_rows():
    rng = np.random.default_rng(5)
    rows = random_rows(rng, 6)
    rt = tf.ragged.constant(rows, dtype=tf.float64) if flat_of(rows) else None
    back = tf.RaggedTensor.from_sparse(rt.to_sparse())
    got = run(back)
    np.testing.assert_allclose(got.flat_values, flat_of(rows))
    np.testing.assert_array_equal(got.row_splits[:len(rows) + 1], splits_of(rows))


def test_with_values_and_with_flat_values_keep_the_partition():
    rt = tf.ragged.constant(NESTED)
    doubled = rt.with_flat_values(rt.flat_values * 2)
    assert run(doubled).to_list() == [[[2 * v for v in r] for r in b] for b in NESTED]
    outer = rt.with_values(tf.ragged.constant([[0], [1], [2], [3], [4]]))
    assert run(outer).to_list() == [[[0], [1]], [], [[2], [3], [4]]]
