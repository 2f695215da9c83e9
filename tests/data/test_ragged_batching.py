"""dense_to_ragged_batch / dense_to_sparse_batch and the Ragged/SparseTensorStructure specs,
against NumPy references."""
import numpy as np
import pytest

import tensorweave as tf

experimental = tf.data.experimental


def _all(dataset, count):
    element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as session:
        return [session.run(element) for _ in range(count)]


def _varying(n):
    return tf.data.Dataset.range(n).map(lambda x: tf.range(x))


def test_ragged_batch_of_vectors_matches_python_ranges():
    dataset = _varying(7).apply(experimental.dense_to_ragged_batch(3))
    assert isinstance(dataset.element_spec, tf.RaggedTensorSpec)
    assert dataset.output_classes is tf.RaggedTensor and dataset.output_types == tf.int64
    got = [value.to_list() for value in _all(dataset, 3)]
    expected = [[list(range(n)) for n in range(k, min(k + 3, 7))] for k in (0, 3, 6)]
    assert got == expected
    with pytest.raises(tf.errors.OutOfRangeError):
        _all(dataset, 4)


def test_ragged_batch_shapes_follow_the_unknown_dimensions():
    rng = np.random.default_rng(0)
    rows = [rng.standard_normal((int(n), 3)).astype(np.float32) for n in (2, 0, 4)]
    cols = [rng.standard_normal((2, int(n))).astype(np.float32) for n in (1, 3, 2)]

    def make(arrays, shape):
        return tf.data.Dataset.from_generator(lambda: iter(arrays), tf.float32, shape)
    by_rows = make(rows, [None, 3]).apply(experimental.dense_to_ragged_batch(3))
    by_cols = make(cols, [2, None]).apply(experimental.dense_to_ragged_batch(3))
    assert by_rows.element_spec.ragged_rank == 1 and by_cols.element_spec.ragged_rank == 2
    got_rows, got_cols = _all(by_rows, 1)[0], _all(by_cols, 1)[0]
    assert [np.asarray(r).tolist() for r in got_rows.to_list()] == [r.tolist() for r in rows]
    assert got_rows.flat_values.shape == (6, 3)
    assert got_cols.to_list() == [c.tolist() for c in cols]


def test_known_shapes_stay_dense_and_nests_are_kept():
    dataset = tf.data.Dataset.range(5).map(
        lambda x: {"fixed": tf.fill([2], x), "ragged": tf.range(x)})
    batched = dataset.apply(experimental.dense_to_ragged_batch(2, drop_remainder=True))
    spec = batched.element_spec
    assert isinstance(spec["fixed"], tf.TensorSpec) and spec["fixed"].shape.as_list() == [2, 2]
    assert spec["ragged"].shape.as_list() == [2, None]
    with tf.Session() as session:
        assert session.run(tf.data.experimental.cardinality(batched)) == 2
    got = _all(batched.repeat(2).prefetch(1).take(3), 3)
    np.testing.assert_array_equal(got[0]["fixed"], [[0, 0], [1, 1]])
    assert got[1]["ragged"].to_list() == [[0, 1], [0, 1, 2]]
    assert got[2]["ragged"].to_list() == [[], [0]]  # the repeat starts over


def test_transformations_that_rebuild_components_refuse_ragged_elements():
    batched = _varying(4).apply(experimental.dense_to_ragged_batch(2))
    with pytest.raises(TypeError, match="does not take elements of RaggedTensorSpec"):
        batched.batch(2)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        _varying(2).apply(experimental.dense_to_ragged_batch(0))


def test_sparse_batch_matches_numpy_padding():
    rng = np.random.default_rng(3)
    arrays = [rng.integers(1, 9, (int(a), int(b))) for a, b in ((1, 2), (3, 1), (2, 3))]
    dataset = tf.data.Dataset.from_generator(lambda: iter(arrays), tf.int64, [None, None])
    batched = dataset.apply(experimental.dense_to_sparse_batch(2, [3, None]))
    assert isinstance(batched.element_spec, tf.SparseTensorSpec)
    first, second = _all(batched, 2)
    assert first.dense_shape.tolist() == [2, 3, 2] and second.dense_shape.tolist() == [1, 3, 3]
    for value, group in ((first, arrays[:2]), (second, arrays[2:])):
        dense = np.zeros(value.dense_shape, np.int64)
        dense[tuple(value.indices.T)] = value.values
        for row, array in enumerate(group):
            expected = np.zeros(value.dense_shape[1:], np.int64)
            expected[:array.shape[0], :array.shape[1]] = array
            np.testing.assert_array_equal(dense[row], expected)
        assert len(value.values) == sum(a.size for a in group)


def test_sparse_batch_errors():
    too_long = _varying(5).apply(experimental.dense_to_sparse_batch(5, [3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not fit row_shape"):
        _all(too_long, 1)
    with pytest.raises(ValueError, match="do not match row_shape"):
        _varying(2).apply(experimental.dense_to_sparse_batch(2, [3, 3]))
    pairs = tf.data.Dataset.range(2).map(lambda x: (x, x))
    with pytest.raises(ValueError, match="single tensors"):
        pairs.apply(experimental.dense_to_sparse_batch(2, [1]))


def test_structure_constructors():
    ragged = experimental.RaggedTensorStructure(tf.float32, [None, None, 2], 1)
    assert ragged == tf.RaggedTensorSpec([None, None, 2], tf.float32, 1)
    sparse = experimental.SparseTensorStructure(tf.int64, [None, 4])
    assert sparse == tf.SparseTensorSpec([None, 4], tf.int64)
    assert sparse.is_compatible_with(tf.SparseTensor([[0, 1]], tf.constant([1], tf.int64),
                                                     [3, 4]))
    assert not sparse.is_compatible_with(tf.SparseTensorSpec([None, 5], tf.int64))


def test_tensor_array_structure_describes_and_rebuilds_tensor_arrays():
    from tensorweave.data import structure
    spec = experimental.TensorArrayStructure(tf.float32, [2], dynamic_size=False)
    array = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    assert spec.is_compatible_with(array) and spec.value_type is tf.TensorArray
    assert not spec.is_compatible_with(tf.TensorArray(tf.int32, size=1, element_shape=[2]))
    components = structure.flatten(spec)
    assert [c.shape.as_list() for c in components] == [[None, 2]]
    flow = tf.constant(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    rebuilt = structure.pack_as(spec, [flow])
    assert isinstance(rebuilt, tf.TensorArray)
    with tf.Session() as session:
        np.testing.assert_array_equal(session.run(rebuilt.read(1)), [2.0, 3.0])
