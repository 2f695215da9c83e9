"""group_by_window, bucket_by_sequence_length and group_by_reducer against NumPy references
(plain Python groupings of the same inputs), including TF's end-of-input key order."""
import numpy as np
import pytest

import tensorweave as tf

exp = tf.data.experimental


def _values(dataset):
    return [np.asarray(v).tolist() if not isinstance(v, tuple) else
            tuple(np.asarray(c).tolist() for c in v) for v in dataset.as_numpy_iterator()]


def _reference_windows(values, key, size):
    """Windows of up to `size` same-key values: full ones when they fill, the rest at the end
    in ascending key order."""
    open_windows, out = {}, []
    for value in values:
        window = open_windows.setdefault(key(value), [])
        window.append(value)
        if len(window) == size(key(value)):
            out.append(open_windows.pop(key(value)))
    return out + [open_windows[k] for k in sorted(open_windows)]


def test_group_by_window_matches_reference():
    values = np.random.default_rng(3).integers(0, 50, size=40).astype(np.int64)
    dataset = tf.data.Dataset.from_tensor_slices(values).apply(exp.group_by_window(
        key_func=lambda x: x % 3, reduce_func=lambda key, window: window.batch(4),
        window_size=4))
    assert _values(dataset) == _reference_windows(values.tolist(), lambda v: v % 3, lambda k: 4)


def test_group_by_window_with_size_func_and_key_in_reduce():
    values = np.arange(20, dtype=np.int64)
    dataset = tf.data.Dataset.from_tensor_slices(values).apply(exp.group_by_window(
        key_func=lambda x: x % 2,
        reduce_func=lambda key, window: window.batch(10).map(lambda b: b * 10),
        window_size_func=lambda key: key + 2))
    expected = [[v * 10 for v in w] for w in _reference_windows(
        values.tolist(), lambda v: v % 2, lambda k: k + 2)]
    assert _values(dataset) == expected
    # The key is a tensor: a batch size computed from it is evaluated per window.
    keyed = tf.data.Dataset.from_tensor_slices(values).apply(exp.group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda key, window: window.batch(key + 1),
        window_size=4))
    assert _values(keyed)[:4] == [[0], [2], [4], [6]]
    assert _values(keyed)[4:6] == [[1, 3], [5, 7]]


def test_group_by_window_in_a_session_and_errors():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(6).apply(exp.group_by_window(
            lambda x: x % 2, lambda key, window: window.batch(3), window_size=3))
        next_element = tf.data.make_one_shot_iterator(dataset).get_next()
        with tf.Session() as sess:
            assert sess.run(next_element).tolist() == [0, 2, 4]
            assert sess.run(next_element).tolist() == [1, 3, 5]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(next_element)
    with pytest.raises(ValueError, match="exactly one of `window_size`"):
        exp.group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(TypeError, match="key_func"):
        tf.data.Dataset.range(4).apply(exp.group_by_window(
            lambda x: tf.cast(x, tf.float32), lambda k, w: w, window_size=2))
    with pytest.raises(TypeError, match="must return a Dataset"):
        tf.data.Dataset.range(4).apply(exp.group_by_window(
            lambda x: x, lambda k, w: k, window_size=2))
    bad_size = tf.data.Dataset.range(4).apply(exp.group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(2), window_size_func=lambda k: k - 1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="window size must be greater"):
        list(bad_size.as_numpy_iterator())


LENGTHS = [1, 5, 3, 8, 2, 9, 4, 6, 7, 2]


def _sequences():
    def generate():
        for length in LENGTHS:
            yield np.arange(1, length + 1, dtype=np.int64)
    return tf.data.Dataset.from_generator(generate, tf.int64, [None])


def _reference_buckets(boundaries, sizes, pad_to=None, pad_value=0):
    bucket_of = lambda n: int(np.searchsorted(boundaries, n, side="right"))  # noqa: E731
    windows = _reference_windows(LENGTHS, bucket_of, lambda b: sizes[b])
    out = []
    for window in windows:
        width = pad_to(bucket_of(window[0])) if pad_to else max(window)
        batch = np.full((len(window), width), pad_value, dtype=np.int64)
        for row, length in enumerate(window):
            batch[row, :length] = np.arange(1, length + 1)
        out.append(batch.tolist())
    return out


def test_bucket_by_sequence_length_pads_to_longest_in_batch():
    dataset = _sequences().apply(exp.bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [3, 7], [2, 3, 2]))
    assert dataset.element_spec.shape.as_list() == [None, None]
    assert _values(dataset) == _reference_buckets([3, 7], [2, 3, 2])


def test_bucket_by_sequence_length_pad_to_boundary_and_padding_values():
    dataset = _sequences().apply(exp.bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [4, 10], [2, 3, 5], pad_to_bucket_boundary=True,
        padding_values=np.int64(-1)))
    assert _values(dataset) == _reference_buckets([4, 10], [2, 3, 5],
                                                  pad_to=lambda b: [3, 9][b], pad_value=-1)
    overflow = _sequences().apply(exp.bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [3, 8], [2, 2, 2], pad_to_bucket_boundary=True))
    with pytest.raises(tf.errors.InvalidArgumentError, match="length < max"):
        list(overflow.as_numpy_iterator())


def test_bucket_by_sequence_length_no_padding_drop_remainder_and_tuples():
    lengths = tf.data.Dataset.from_tensor_slices(np.array(LENGTHS, dtype=np.int64))
    dataset = lengths.apply(exp.bucket_by_sequence_length(
        lambda n: n, [4], [2, 3], no_padding=True, drop_remainder=True))
    full = [w for w in _reference_windows(LENGTHS, lambda n: int(n >= 4),
                                          lambda b: [2, 3][b]) if len(w) == [2, 3][int(w[0] >= 4)]]
    assert _values(dataset) == full
    pairs = _sequences().map(lambda x: (x, tf.shape(x)[0])).apply(
        exp.bucket_by_sequence_length(lambda x, n: n, [3, 7], [2, 3, 2]))
    got = _values(pairs)
    assert [g[0] for g in got] == _reference_buckets([3, 7], [2, 3, 2])
    assert [g[1] for g in got] == [[len([v for v in row if v]) for row in g[0]] for g in got]


@pytest.mark.parametrize("kwargs,match", [
    (dict(bucket_boundaries=[3, 7], bucket_batch_sizes=[2, 2]), "len\\(bucket_batch_sizes\\)"),
    (dict(bucket_boundaries=[7, 3], bucket_batch_sizes=[2, 2, 2]), "strictly increasing"),
    (dict(bucket_boundaries=[3], bucket_batch_sizes=[0, 2]), "must be positive"),
])
def test_bucket_by_sequence_length_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        exp.bucket_by_sequence_length(lambda x: tf.shape(x)[0], **kwargs)


def test_group_by_reducer_sum_count_and_mean():
    values = np.random.default_rng(5).integers(0, 100, size=30).astype(np.int64)
    reducer = exp.Reducer(init_func=lambda key: (np.int64(0), np.int64(0)),
                          reduce_func=lambda state, x: (state[0] + x, state[1] + 1),
                          finalize_func=lambda total, count: (total, count))
    dataset = tf.data.Dataset.from_tensor_slices(values).apply(
        exp.group_by_reducer(lambda x: x % 4, reducer))
    expected = [(int(values[values % 4 == k].sum()), int((values % 4 == k).sum()))
                for k in sorted(set((values % 4).tolist()))]
    assert _values(dataset) == expected
    with tf.Graph().as_default():
        next_element = tf.data.make_one_shot_iterator(dataset).get_next()
        with tf.Session() as sess:
            assert tuple(int(v) for v in sess.run(next_element)) == expected[0]


def test_group_by_reducer_errors():
    with pytest.raises(TypeError, match="reducer"):
        tf.data.Dataset.range(3).apply(exp.group_by_reducer(lambda x: x, lambda s, x: s))
    with pytest.raises(TypeError, match="finalize_func"):
        exp.Reducer(lambda k: k, lambda s, x: s, None)
    mismatched = exp.Reducer(lambda k: np.int64(0), lambda s, x: tf.cast(s, tf.float32),
                             lambda s: s)
    with pytest.raises(TypeError, match="differs in structure or types"):
        tf.data.Dataset.range(3).apply(exp.group_by_reducer(lambda x: x, mismatched))


def test_padded_batch_takes_tensor_padding_values():
    """Constant tensors are folded; a placeholder is bound when the iterator is initialized."""
    ragged = tf.data.Dataset.range(1, 4).map(lambda n: tf.range(n))
    expected = lambda pad: [[0, pad, pad], [0, 1, pad], [0, 1, 2]]  # noqa: E731
    with tf.Graph().as_default():
        constant = ragged.padded_batch(3, [None], padding_values=tf.constant(-1, tf.int64))
        assert [b.tolist() for b in constant.as_numpy_iterator()] == [expected(-1)]
        pad = tf.placeholder(tf.int64, [])
        fed = ragged.padded_batch(3, [None], padding_values=pad)
        iterator = tf.data.make_initializable_iterator(fed)
        batch = iterator.get_next()
        with tf.Session() as sess:
            for value in (-7, 9):
                sess.run(iterator.initializer, {pad: value})
                assert sess.run(batch).tolist() == expected(value)
        with pytest.raises(TypeError, match="expected a int64"):
            ragged.padded_batch(3, [None], padding_values=tf.constant(1.0))
        bucketed = ragged.apply(exp.bucket_by_sequence_length(
            lambda x: tf.shape(x)[0], [5], [3, 3], padding_values=tf.constant(-2, tf.int64)))
        assert [b.tolist() for b in bucketed.as_numpy_iterator()] == [expected(-2)]
