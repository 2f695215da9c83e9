"""Dataset transformations against plain-Python references (iterated without a graph)."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data import shuffling

Dataset = tf.data.Dataset


def values(dataset):
    """The elements as plain Python (ints/floats/bytes, tuples, dicts, nested lists)."""
    def plain(item):
        if isinstance(item, dict):
            return {k: plain(v) for k, v in item.items()}
        if isinstance(item, tuple):
            return tuple(plain(v) for v in item)
        return np.asarray(item).tolist()
    return [plain(element) for element in dataset.as_numpy_iterator()]


# --- sources --------------------------------------------------------------------------------------
def test_from_tensor_slices_slices_every_component_in_order():
    x = np.arange(12).reshape(6, 2)
    labels = np.array([b"a", b"b", b"c", b"d", b"e", b"f"], dtype=object)
    dataset = Dataset.from_tensor_slices({"x": x, "label": (labels, x[:, 0] * 1.5)})
    assert dataset.output_types == {"x": tf.int64, "label": (tf.string, tf.float64)}
    assert dataset.output_shapes["x"].as_list() == [2]
    expected = [{"x": x[i].tolist(), "label": (labels[i], x[i, 0] * 1.5)} for i in range(6)]
    assert values(dataset) == expected


def test_python_lists_are_one_component_with_tf_default_dtypes():
    dataset = Dataset.from_tensor_slices([[1, 2], [3, 4]])
    assert dataset.output_types == tf.int32 and dataset.output_shapes.as_list() == [2]
    assert values(dataset) == [[1, 2], [3, 4]]
    assert Dataset.from_tensor_slices([0.5, 1.5]).output_types == tf.float32


def test_slices_of_different_lengths_are_rejected():
    with pytest.raises(ValueError, match="same first dimension"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))


def test_from_tensors_range_and_generator():
    assert values(Dataset.from_tensors(([1, 2], 3.0))) == [([1, 2], 3.0)]
    assert values(Dataset.range(5)) == list(range(5))
    assert values(Dataset.range(2, 11, 3)) == list(range(2, 11, 3))
    assert values(Dataset.range(5, 0, -2)) == [5, 3, 1]
    assert Dataset.range(3).output_types == tf.int64

    def gen(n):
        for i in range(n):
            yield i, [float(i)] * i
    dataset = Dataset.from_generator(gen, (tf.int32, tf.float32), ([], [None]), args=(4,))
    assert dataset.output_shapes[1].as_list() == [None]
    assert values(dataset) == [(i, [float(i)] * i) for i in range(4)]
    assert values(dataset) == values(dataset)  # each iteration calls the generator afresh


def test_generator_values_are_checked_against_the_declared_shapes():
    dataset = Dataset.from_generator(lambda: iter([[1, 2], [1, 2, 3]]), tf.int64, [2])
    with pytest.raises(ValueError, match=r"shape \(3,\) does not match the declared shape"):
        values(dataset)


def test_zip_and_concatenate():
    a, b = Dataset.range(4), Dataset.from_tensor_slices(np.arange(10, 13))
    assert values(Dataset.zip((a, {"b": b}))) == [(i, {"b": 10 + i}) for i in range(3)]
    joined = Dataset.from_tensor_slices(np.zeros((2, 3))).concatenate(
        Dataset.from_tensor_slices(np.ones((1, 3))))
    assert len(values(joined)) == 3 and joined.output_shapes.as_list() == [3]
    ragged = Dataset.from_tensors(np.zeros(2)).concatenate(Dataset.from_tensors(np.zeros(3)))
    assert ragged.output_shapes.as_list() == [None]
    with pytest.raises(TypeError, match="types differ"):
        Dataset.range(2).concatenate(Dataset.from_tensors(1.0))


# --- map and filter -------------------------------------------------------------------------------
def test_map_unpacks_tuples_and_passes_dicts_whole():
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10))
    assert values(pairs.map(lambda a, b: a + b)) == [0, 11, 22, 33]
    dicts = Dataset.from_tensor_slices({"a": np.arange(3)})
    assert values(dicts.map(lambda d: {"twice": d["a"] * 2})) == [{"twice": v} for v in (0, 2, 4)]
    assert values(pairs.map(lambda a, b: [b, a]))[1] == (10, 1)  # a list is a tuple


def test_traced_map_matches_numpy_with_static_shapes():
    images = np.random.default_rng(0).integers(0, 256, (5, 4, 4)).astype(np.uint8)
    dataset = Dataset.from_tensor_slices(images).map(lambda x: tf.cast(x, tf.float32) / 255.)
    assert dataset._fn.mode == "graph" and dataset.output_shapes.as_list() == [4, 4]
    for got, image in zip(dataset.as_numpy_iterator(), images):
        np.testing.assert_allclose(got, image.astype(np.float32) / np.float32(255), rtol=1e-6)
        assert got.dtype == np.float32


def test_numpy_function_runs_on_values_with_known_rank():
    dataset = Dataset.range(4).map(lambda v: np.full(int(v), v, dtype=np.int16))
    assert dataset._fn.mode == "numpy"
    assert dataset.output_types == tf.int16 and dataset.output_shapes.as_list() == [None]
    assert values(dataset) == [[v] * v for v in range(4)]


def test_map_function_captures_constants_of_the_pipeline_graph():
    with tf.Graph().as_default():
        scale = tf.constant(2.0)
        offsets = tf.constant([10.0, 20.0])
        scaled = Dataset.range(3).map(lambda v: tf.cast(v, tf.float32) * scale + offsets)
        assert values(scaled) == [[10, 20], [12, 22], [14, 24]]
        assert values(scaled.batch(2))[0] == [[10, 20], [12, 22]]  # the vectorized path
        assert values(Dataset.range(2).map(lambda v: offsets)) == [[10, 20], [10, 20]]
        fed = tf.placeholder(tf.float32, [])
        with pytest.raises(ValueError, match="not a constant"):
            Dataset.range(3).map(lambda v: tf.cast(v, tf.float32) * fed)
        stateful = tf.random_shuffle(tf.constant([1.0, 2.0]))
        with pytest.raises(ValueError, match="stateful op RandomShuffle.*get_next"):
            Dataset.range(3).map(lambda v: tf.cast(v, tf.float32) * stateful)
        # Tables and variables resolve in the iterator's session (test_dataset_resources.py);
        # read without one, a dataset using them is refused, naming them.
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([b"a"]), tf.constant([1], tf.int64)), -1)
        words = Dataset.from_tensor_slices(np.array([b"a", b"b"], dtype=object))
        with pytest.raises(ValueError, match="hash_table.*through an iterator"):
            list(words.map(table.lookup).as_numpy_iterator())
    with tf.Graph().as_default():
        elsewhere = tf.constant(2.0)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="another graph"):
            Dataset.range(3).map(lambda v: tf.cast(v, tf.float32) * elsewhere)


def test_filter_keeps_elements_whose_predicate_is_true():
    dataset = Dataset.range(20).filter(lambda v: tf.equal(v % 3, 0))
    assert values(dataset) == [v for v in range(20) if v % 3 == 0]
    assert values(Dataset.range(6).filter(lambda v: bool(v % 2))) == [1, 3, 5]  # NumPy predicate
    with pytest.raises(TypeError, match="scalar bool"):
        Dataset.range(3).filter(lambda v: v * 2)


@pytest.mark.timeout(30)
def test_parallel_map_keeps_the_input_order_and_raises_at_the_failing_element():
    def slow_square(v):
        import time
        time.sleep(0.002 * (5 - int(v) % 5))  # later elements finish first
        if v == 13:
            raise ValueError("element 13 is bad")
        return v * v
    dataset = Dataset.range(25).map(lambda v: np.int64(slow_square(v)), num_parallel_calls=4)
    seen = []
    with pytest.raises(ValueError, match="element 13"):
        for value in dataset.as_numpy_iterator():
            seen.append(int(value))
    assert seen == [v * v for v in range(13)]
    ordered = Dataset.range(40).map(lambda v: v * 3, num_parallel_calls=3)
    assert values(ordered) == [3 * v for v in range(40)]


# --- batching -------------------------------------------------------------------------------------
@pytest.mark.parametrize("drop_remainder", [False, True])
def test_batch_boundaries(drop_remainder):
    dataset = Dataset.range(10).batch(4, drop_remainder=drop_remainder)
    expected = [list(range(i, min(i + 4, 10))) for i in range(0, 10, 4)]
    if drop_remainder:
        expected = expected[:-1]
    assert values(dataset) == expected
    assert dataset.output_shapes.as_list() == [4 if drop_remainder else None]


def test_batch_of_structures_and_unbatchable_shapes():
    dataset = Dataset.from_tensor_slices((np.arange(5), np.arange(10).reshape(5, 2))).batch(2)
    assert values(dataset)[0] == ([0, 1], [[0, 1], [2, 3]])
    ragged = Dataset.range(1, 4).map(lambda v: np.zeros(int(v))).batch(2)
    with pytest.raises(ValueError, match="padded_batch"):
        values(ragged)


def test_padded_batch_pads_to_the_largest_or_the_given_shape():
    ragged = Dataset.range(1, 5).map(lambda v: np.full(int(v), v, dtype=np.int64))
    batches = values(ragged.padded_batch(2, padded_shapes=[None]))
    assert batches == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    fixed = ragged.padded_batch(3, padded_shapes=[5], padding_values=np.int64(-1))
    assert fixed.output_shapes.as_list() == [None, 5]
    assert values(fixed)[0] == [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1], [3, 3, 3, -1, -1]]
    with pytest.raises(ValueError, match="does not fit"):
        values(ragged.padded_batch(4, padded_shapes=[2]))


# --- choosing and ordering elements ---------------------------------------------------------------
def test_repeat_take_skip():
    assert values(Dataset.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(Dataset.range(3).filter(lambda v: v > 5).repeat()) == []  # terminates
    assert values(Dataset.range(6).skip(4)) == [4, 5]
    assert values(Dataset.range(6).skip(-1)) == [] and values(Dataset.range(4).take(-1)) == [0, 1,
                                                                                            2, 3]
    assert values(Dataset.range(10).batch(3).repeat(2).take(5)) == [
        [0, 1, 2], [3, 4, 5], [6, 7, 8], [9], [0, 1, 2]]


@pytest.mark.parametrize("num_shards", [1, 3, 4])
def test_shards_are_disjoint_and_complete(num_shards):
    shards = [values(Dataset.range(17).shard(num_shards, index)) for index in range(num_shards)]
    for index, shard in enumerate(shards):
        assert shard == list(range(17))[index::num_shards]
    assert sorted(itertools.chain(*shards)) == list(range(17))
    with pytest.raises(ValueError, match="index"):
        Dataset.range(3).shard(2, 2)


def _reference_shuffle(items, buffer_size, rng):
    """The documented draw rule, written independently of the implementation."""
    items, buffer, out = list(items), [], []
    for item in items:
        if len(buffer) < buffer_size:
            buffer.append(item)
            continue
        position = int(rng.random() * len(buffer))
        out.append(buffer[position])
        buffer[position] = item
    while buffer:
        position = int(rng.random() * len(buffer))
        out.append(buffer[position])
        buffer[position] = buffer[-1]
        buffer.pop()
    return out


def test_shuffle_follows_the_documented_draws_and_is_a_permutation():
    tf.set_random_seed(5)
    got = values(Dataset.range(50).shuffle(10, seed=3))
    assert got == _reference_shuffle(range(50), 10, np.random.default_rng([5, 3, 0]))
    assert sorted(got) == list(range(50)) and got != list(range(50))


def test_shuffle_buffer_bounds_how_far_an_element_moves_forward():
    got = values(Dataset.range(200).shuffle(8, seed=1))
    for position, value in enumerate(got):
        assert value <= position + 7  # only the first `buffer_size` unread elements are eligible
    assert values(Dataset.range(20).shuffle(1, seed=1)) == list(range(20))


def test_shuffle_seeds_and_reshuffling_across_epochs():
    seeded = Dataset.range(30).shuffle(30, seed=7)
    assert values(seeded) == values(seeded)  # each iteration restarts the seeded sequence
    epochs = values(seeded.repeat(3))
    first, second, third = epochs[:30], epochs[30:60], epochs[60:]
    assert sorted(first) == sorted(second) == list(range(30))
    assert first != second and second != third
    fixed = values(Dataset.range(30).shuffle(30, seed=7, reshuffle_each_iteration=False)
                   .repeat(2))
    assert fixed[:30] == fixed[30:]
    unseeded = Dataset.range(100).shuffle(100)
    assert values(unseeded) != values(unseeded)


def test_interleave_matches_the_cycle_rule():
    dataset = Dataset.range(1, 6).interleave(
        lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert values(dataset) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
                               3, 3, 4, 4, 5, 5, 5, 5, 5, 5]
    lengths = Dataset.range(1, 5).interleave(lambda n: Dataset.range(n * 10, n * 10 + n),
                                             cycle_length=3)
    assert values(lengths) == [10, 20, 30, 21, 31, 40, 32, 41, 42, 43]
    flat = Dataset.range(3).flat_map(lambda n: Dataset.range(n))
    assert values(flat) == [0, 0, 1]


def test_cache_replays_the_first_complete_pass():
    calls = []

    def record(v):
        calls.append(int(v))
        return v
    cached = Dataset.range(4).map(lambda v: np.int64(record(v))).cache()
    calls.clear()
    assert values(cached.repeat(3)) == [0, 1, 2, 3] * 3
    assert calls == [0, 1, 2, 3]
    assert values(cached) == [0, 1, 2, 3] and calls == [0, 1, 2, 3]


def test_cache_to_a_file(tmp_path):
    base = str(tmp_path / "elements")
    cached = Dataset.from_tensor_slices((np.arange(6.0).reshape(3, 2),
                                         np.array([b"x", b"y", b"z"], dtype=object))).cache(base)
    first = values(cached.take(2))  # an incomplete pass leaves no cache file
    assert not list(tmp_path.iterdir())
    assert values(cached) == values(cached) == [([0.0, 1.0], b"x"), ([2.0, 3.0], b"y"),
                                                ([4.0, 5.0], b"z")]
    assert first == values(cached)[:2]
    assert (tmp_path / "elements.twcache").exists()


@pytest.mark.timeout(30)
def test_prefetch_keeps_order_and_passes_errors_through():
    assert values(Dataset.range(50).prefetch(3)) == list(range(50))

    def gen():
        yield 1
        raise RuntimeError("the generator broke")
    broken = Dataset.from_generator(gen, tf.int64).prefetch(2)
    with pytest.raises(RuntimeError, match="generator broke"):
        values(broken)


# --- fast paths give the same elements as the element-by-element path ---------------------------
@pytest.mark.parametrize("pipeline", [
    lambda d: d.batch(4),
    lambda d: d.shuffle(7, seed=2).batch(5, drop_remainder=True),
    lambda d: d.shard(3, 1).repeat(2).batch(4),
    lambda d: d.skip(3).take(11).batch(3),
])
def test_gathered_batches_equal_stacked_batches(pipeline):
    source = Dataset.from_tensor_slices((np.arange(23), np.arange(46.0).reshape(23, 2)))
    fast = pipeline(source)
    # A NumPy identity map hides the index plan: its batches are stacked element by element.
    hidden = source.map(lambda a, b: (np.asarray(a), np.asarray(b)))
    assert hidden._fn.mode == "numpy" and not hidden._fn.vectorizable
    assert values(fast) == values(pipeline(hidden))


def test_vectorized_map_equals_per_element_map():
    images = np.random.default_rng(1).integers(0, 256, (30, 3, 3)).astype(np.uint8)
    scale = lambda x: tf.maximum(tf.cast(x, tf.float32) / 255. - 0.5, 0.0)  # noqa: E731
    vectorized = Dataset.from_tensor_slices(images).shuffle(30, seed=4).map(scale).batch(8)
    assert vectorized._inputs[0]._fn.vectorizable
    per_element = Dataset.from_tensor_slices(images).shuffle(30, seed=4).map(
        lambda x: tf.reshape(scale(x), [3, 3])).batch(8)
    assert not per_element._inputs[0]._fn.vectorizable
    for fast, slow in zip(vectorized.as_numpy_iterator(), per_element.as_numpy_iterator()):
        np.testing.assert_array_equal(fast, slow)


def test_the_reference_shuffle_helper_agrees_with_the_module_function():
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    assert list(shuffling.shuffled(iter(range(40)), 6, rng_a)) == _reference_shuffle(
        range(40), 6, rng_b)
