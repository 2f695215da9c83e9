"""ignore_errors, from_list, pad_to_cardinality, rejection_resample, DatasetSpec /
get_structure / NumpyIterator, and lookup tables filled from datasets: against hand-computed
expectations, NumPy statistics and TF's documented errors."""
import numpy as np
import pytest

import tensorweave as tf
from tests.data.reading import read_all

exp = tf.data.experimental


# --- ignore_errors ------------------------------------------------------------------------------
def test_ignore_errors_drops_failing_elements_of_map_and_filter():
    values = np.array([1.0, 2.0, 0.0, 4.0, 0.0, 8.0], dtype=np.float32)
    inverted = tf.data.Dataset.from_tensor_slices(values).map(
        lambda x: tf.debugging.check_numerics(1.0 / x, "division by zero"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
        read_all(inverted)
    kept = read_all(inverted.apply(exp.ignore_errors()))
    np.testing.assert_allclose(kept, 1.0 / values[values != 0])
    # Parallel map and filter drop the same elements; ops after ignore_errors still fail.
    parallel = tf.data.Dataset.from_tensor_slices(values).map(
        lambda x: tf.debugging.check_numerics(1.0 / x, "zero"), num_parallel_calls=2)
    assert len(read_all(parallel.apply(exp.ignore_errors()))) == 4
    numeric = tf.data.Dataset.from_tensor_slices(np.array([b"1", b"x", b"3"], dtype=object))
    parsed = numeric.filter(lambda s: tf.strings.to_number(s) > 0).apply(exp.ignore_errors())
    assert [bytes(v) for v in read_all(parsed)] == [b"1", b"3"]


def test_ignore_errors_ends_at_a_generator_error():
    def generate():
        yield 1
        yield 2
        raise RuntimeError("broken source")

    dataset = tf.data.Dataset.from_generator(generate, tf.int64, [])
    assert [int(v) for v in dataset.apply(exp.ignore_errors(log_warning=True))
            .as_numpy_iterator()] == [1, 2]


# --- from_list and pad_to_cardinality -------------------------------------------------------------
def test_from_list_elements_structure_and_errors():
    dataset = exp.from_list([(1, "a"), (2, "b"), (3, "c")])
    assert [(int(a), bytes(b)) for a, b in read_all(dataset)] == [
        (1, b"a"), (2, b"b"), (3, b"c")]
    assert dataset.element_spec[0].dtype == tf.int32 and dataset.element_spec[1].dtype == tf.string
    ragged = exp.from_list([np.zeros(2), np.ones(3)])
    assert ragged.element_spec.shape.as_list() == [None]
    assert [v.tolist() for v in ragged.as_numpy_iterator()] == [[0, 0], [1, 1, 1]]
    with tf.Graph().as_default():
        assert tf.Session().run(ragged.cardinality()) == 2
    with pytest.raises(ValueError, match="non-empty list"):
        exp.from_list([])
    with pytest.raises(ValueError, match="structure of element 0"):
        exp.from_list([(1, 2), 3])
    with pytest.raises(TypeError, match="element 1"):
        exp.from_list([1, "a"])


def test_pad_to_cardinality_pads_with_zeros_and_mask():
    dataset = tf.data.Dataset.from_tensor_slices({"x": np.arange(1, 4, dtype=np.int64),
                                                  "y": np.ones((3, 2), np.float32)})
    padded = dataset.apply(exp.pad_to_cardinality(5))
    got = read_all(padded)
    assert [int(e["x"]) for e in got] == [1, 2, 3, 0, 0]
    assert [bool(e["valid"]) for e in got] == [True, True, True, False, False]
    np.testing.assert_array_equal(np.stack([e["y"] for e in got]),
                                  np.concatenate([np.ones((3, 2)), np.zeros((2, 2))]))
    with tf.Graph().as_default():
        assert tf.Session().run(padded.cardinality()) == 5
    with pytest.raises(ValueError, match="no larger than 2"):
        dataset.apply(exp.pad_to_cardinality(2))
    with pytest.raises(ValueError, match="must be dicts"):
        tf.data.Dataset.range(3).apply(exp.pad_to_cardinality(4))
    with pytest.raises(ValueError, match="already a key"):
        dataset.apply(exp.pad_to_cardinality(4, mask_key="x"))
    with pytest.raises(ValueError, match="known number"):
        dataset.filter(lambda e: e["x"] > 1).apply(exp.pad_to_cardinality(4))


# --- rejection_resample ---------------------------------------------------------------------------
@pytest.mark.parametrize("initial", [[0.6, 0.3, 0.1], None])
def test_rejection_resample_reaches_the_target_distribution(initial):
    rng = np.random.default_rng(0)
    classes = rng.choice(3, size=10000, p=[0.6, 0.3, 0.1]).astype(np.int64)
    target = [0.2, 0.3, 0.5]
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        dataset = tf.data.Dataset.from_tensor_slices(classes).apply(exp.rejection_resample(
            lambda c: c, target_dist=target, initial_dist=initial, seed=3))
        pairs = list(dataset.as_numpy_iterator())
    labels = np.array([int(label) for label, _ in pairs])
    assert all(int(label) == int(element) for label, element in pairs)
    frequencies = np.bincount(labels, minlength=3) / len(labels)
    # ~0.1 * 10000 / 0.5 = 2000 kept: the standard error of each frequency is ~0.011.
    np.testing.assert_allclose(frequencies, target, atol=0.035)
    assert len(labels) > 1500


def test_rejection_resample_errors():
    with pytest.raises(ValueError, match="target_dist"):
        exp.rejection_resample(lambda c: c, [0.5, 0.6])(tf.data.Dataset.range(3))
    with pytest.raises(ValueError, match="initial_dist has 2"):
        exp.rejection_resample(lambda c: c, [0.5, 0.5, 0.0], [0.5, 0.5])(
            tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match="class_func"):
        exp.rejection_resample(lambda c: tf.cast(c, tf.float32), [1.0])(
            tf.data.Dataset.range(3))
    outside = tf.data.Dataset.range(3).apply(exp.rejection_resample(lambda c: c, [0.5, 0.5]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="class 2"):
        list(outside.as_numpy_iterator())


# --- specs and NumpyIterator ------------------------------------------------------------------------
def test_dataset_spec_get_structure_and_legacy_aliases():
    dataset = tf.data.Dataset.from_tensor_slices((np.zeros((4, 3), np.float32),
                                                  np.arange(4)))
    spec = tf.data.DatasetSpec.from_value(dataset)
    assert spec.element_spec == dataset.element_spec and spec.value_type is tf.data.Dataset
    assert spec == tf.data.DatasetSpec(dataset.element_spec)
    assert spec.is_compatible_with(dataset)
    assert spec.is_compatible_with(tf.data.DatasetSpec(
        (tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int64))))
    assert not spec.is_compatible_with(tf.data.DatasetSpec(tf.TensorSpec([3], tf.float32)))
    assert exp.get_structure(dataset) == dataset.element_spec
    with tf.Graph().as_default():
        iterator = tf.data.make_one_shot_iterator(dataset)
        assert exp.get_structure(iterator) == dataset.element_spec
    with pytest.raises(TypeError, match="dataset_or_iterator"):
        exp.get_structure(np.zeros(3))
    with pytest.raises(TypeError, match="element_spec"):
        tf.data.DatasetSpec([1, 2])
    assert exp.TensorStructure is tf.TensorSpec and exp.DatasetStructure is tf.data.DatasetSpec
    assert isinstance(spec, exp.Structure) and isinstance(tf.TensorSpec([2]), exp.Structure)


def test_numpy_iterator_is_an_iterator_of_numpy_nests():
    iterator = tf.data.Dataset.range(3).map(lambda x: {"v": x * 2}).as_numpy_iterator()
    assert isinstance(iterator, tf.data.NumpyIterator)
    assert iter(iterator) is iterator
    assert next(iterator) == {"v": 0} and iterator.next() == {"v": 2}
    assert [e["v"] for e in iterator] == [4]
    with pytest.raises(StopIteration):
        next(iterator)
    with tf.Graph().as_default():
        fed = tf.placeholder(tf.int64, [])
        with pytest.raises(ValueError, match="initializable iterator"):
            tf.data.Dataset.range(fed).as_numpy_iterator()


# --- lookup tables from datasets ------------------------------------------------------------------
def test_tables_from_datasets_match_python_dicts():
    words = np.array([b"the", b"cat", b"sat"], dtype=object)
    with tf.Graph().as_default():
        index = exp.index_table_from_dataset(tf.data.Dataset.from_tensor_slices(words))
        squares = exp.table_from_dataset(
            tf.data.Dataset.range(5).map(lambda x: (x, tf.cast(x * x, tf.float32))),
            default_value=-1.0, key_dtype=tf.int64)
        limited = exp.index_table_from_dataset(tf.data.Dataset.from_tensor_slices(words),
                                               vocab_size=2)
        oov = exp.index_table_from_dataset(tf.data.Dataset.from_tensor_slices(words),
                                           num_oov_buckets=2)
        lookups = [index.lookup(tf.constant([b"sat", b"dog", b"the"])),
                   squares.lookup(tf.constant([4, 7], tf.int64)),
                   limited.lookup(tf.constant([b"cat", b"sat"])),
                   oov.lookup(tf.constant([b"cat", b"dog", b"eel"])), oov.size()]
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            ids, values, few, hashed, size = sess.run(lookups)
    assert ids.tolist() == [2, -1, 0] and values.tolist() == [16.0, -1.0]
    assert few.tolist() == [1, -1]
    assert hashed[0] == 1 and all(3 <= h < 5 for h in hashed[1:]) and size == 5
    with pytest.raises(TypeError, match="key_dtype"):
        exp.index_table_from_dataset(tf.data.Dataset.range(3))
    with pytest.raises(ValueError, match="pairs of scalars"):
        exp.DatasetInitializer(tf.data.Dataset.range(3))
    with pytest.raises(ValueError, match="default_value is required"):
        exp.table_from_dataset(tf.data.Dataset.range(3).map(lambda x: (x, x)),
                               key_dtype=tf.int64)


def test_sparse_values_are_refused_with_a_clear_error():
    example = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2, 3]))}))
    records = tf.data.Dataset.from_tensors(np.array(example.SerializeToString(), dtype=object))
    sparse = {"x": tf.io.VarLenFeature(tf.int64)}
    with pytest.raises(ValueError, match="returned a value that: got a SparseTensor"):
        records.map(lambda s: tf.parse_single_example(s, sparse))
    dense = records.map(lambda s: tf.sparse.to_dense(tf.parse_single_example(s, sparse)["x"]))
    assert [v.tolist() for v in dense.as_numpy_iterator()] == [[1, 2, 3]]
    value = tf.SparseTensorValue(np.array([[0]]), np.array([1.0]), np.array([3]))
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.data.Dataset.from_tensor_slices(value)
