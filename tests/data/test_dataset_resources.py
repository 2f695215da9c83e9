"""Tables and variables of the pipeline's graph used inside tf.data functions (TF 1.x's NMT
tutorial: `src.map(lambda s: tf.cast(vocab.lookup(s), tf.int32))`): the function runs against
the resources of the session (the task) running the iterator, initialised by that session."""
import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.timeout(120)
BOUNDED = tf.RunOptions(timeout_in_ms=30000)
VOCAB = ["<unk>", "the", "cat", "sat", "on", "mat"]
LINES = ["the cat sat", "on the mat", "a dog sat on the cat", "mat"]


def _expected_ids(lines, vocab):
    """Closed form: a word's line number in the vocabulary file, len(vocab) for any other word
    (one OOV bucket), each sentence padded with 0 to the longest of its batch."""
    index = {word: i for i, word in enumerate(vocab)}
    return [[index.get(word, len(vocab)) for word in line.split()] for line in lines]


def _padded(rows):
    width = max(len(row) for row in rows)
    return np.array([row + [0] * (width - len(row)) for row in rows], dtype=np.int32)


def _nmt_pipeline(tmp_path, **map_kwargs):
    """The NMT tutorial's source pipeline: split words, look them up in a vocabulary file,
    cast, pad per batch; returns (next batch of ids and lengths, its iterator)."""
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("\n".join(VOCAB) + "\n")
    text_file = tmp_path / "src.txt"
    text_file.write_text("\n".join(LINES) + "\n")
    table = tf.contrib.lookup.index_table_from_file(str(vocab_file), num_oov_buckets=1)
    dataset = tf.data.TextLineDataset(str(text_file))
    dataset = dataset.map(lambda line: tf.string_split([line]).values)
    dataset = dataset.map(lambda words: tf.cast(table.lookup(words), tf.int32), **map_kwargs)
    dataset = dataset.map(lambda ids: (ids, tf.size(ids)))
    dataset = dataset.padded_batch(2, padded_shapes=([None], []))
    iterator = dataset.make_initializable_iterator()
    return iterator.get_next(), iterator


def _read_all(sess, batch):
    batches = []
    while True:
        try:
            batches.append(sess.run(batch, options=BOUNDED))
        except tf.errors.OutOfRangeError:
            return batches


def _check_nmt_batches(batches):
    ids = _expected_ids(LINES, VOCAB)
    assert len(batches) == 2
    for number, (values, lengths) in enumerate(batches):
        rows = ids[2 * number:2 * number + 2]
        assert values.dtype == np.int32
        np.testing.assert_array_equal(values, _padded(rows))
        np.testing.assert_array_equal(lengths, [len(row) for row in rows])


@pytest.mark.parametrize("parallel", [None, 2])
def test_vocabulary_file_table_in_map_gives_the_tutorials_ids(tmp_path, parallel):
    with tf.Graph().as_default():
        batch, iterator = _nmt_pipeline(tmp_path, num_parallel_calls=parallel)
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            sess.run(iterator.initializer)
            _check_nmt_batches(_read_all(sess, batch))
            sess.run(iterator.initializer)  # a second epoch, the same table
            _check_nmt_batches(_read_all(sess, batch))


def test_static_hash_table_and_index_table_from_tensor_in_map_with_prefetch():
    with tf.Graph().as_default():
        keys = np.array([b"a", b"b", b"c"], dtype=object)
        scores = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant(keys), tf.constant([1.5, 2.5, 3.5], tf.float32)), -1.0)
        index = tf.contrib.lookup.index_table_from_tensor(tf.constant(keys), default_value=-1)
        words = np.array([b"c", b"x", b"a", b"b", b"a"], dtype=object)
        dataset = tf.data.Dataset.from_tensor_slices(words).map(
            lambda word: (scores.lookup(word), index.lookup(word)), num_parallel_calls=2)
        iterator = dataset.prefetch(2).make_initializable_iterator()
        element = iterator.get_next()
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            sess.run(iterator.initializer)
            got = [sess.run(element, options=BOUNDED) for _ in words]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(element, options=BOUNDED)
        expected_scores = {b"a": 1.5, b"b": 2.5, b"c": 3.5}
        assert [float(s) for s, _ in got] == [expected_scores.get(w, -1.0) for w in words]
        assert [int(i) for _, i in got] == [keys.tolist().index(w) if w in keys else -1
                                            for w in words]


def test_variable_read_in_map_sees_its_value_when_the_element_is_made():
    """As TF's dataset functions capture a variable (not its value): elements made after an
    assign use the new value."""
    with tf.Graph().as_default():
        scale = tf.Variable(2.0)
        offset = tf.Variable(0.5)
        dataset = tf.data.Dataset.range(6).map(
            lambda x: tf.cast(x, tf.float32) * scale + offset.read_value())
        iterator = dataset.make_initializable_iterator()
        element = iterator.get_next()
        assign = tf.assign(scale, 10.0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(iterator.initializer)
            first = [sess.run(element) for _ in range(2)]
            sess.run(assign)
            rest = [sess.run(element) for _ in range(4)]
        np.testing.assert_allclose(first, np.arange(2) * 2.0 + 0.5)
        np.testing.assert_allclose(rest, np.arange(2, 6) * 10.0 + 0.5)


def test_uninitialised_resources_fail_naming_them():
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([b"a"]), tf.constant([1], tf.int64)), -1, name="my_vocab")
        words = tf.data.Dataset.from_tensor_slices(np.array([b"a"], dtype=object))
        lookups = words.map(table.lookup).make_initializable_iterator()
        weight = tf.Variable(3.0, name="my_weight")
        scaled = tf.data.Dataset.range(2).map(
            lambda x: tf.cast(x, tf.float32) * weight).make_initializable_iterator()
        with tf.Session() as sess:
            sess.run([lookups.initializer, scaled.initializer])
            with pytest.raises(tf.errors.FailedPreconditionError, match="my_vocab"):
                sess.run(lookups.get_next(), options=BOUNDED)
            with pytest.raises(tf.errors.FailedPreconditionError, match="my_weight"):
                sess.run(scaled.get_next(), options=BOUNDED)


def test_tables_resolve_per_session():
    """Two sessions have their own tables: each iterator sees the one its session filled."""
    with tf.Graph().as_default():
        source = tf.placeholder(tf.int64, [2])
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([7, 8], tf.int64), source), -1)
        iterator = tf.data.Dataset.from_tensor_slices(np.array([8, 7], np.int64)).map(
            table.lookup).make_initializable_iterator()
        element = iterator.get_next()
        with tf.Session() as first, tf.Session() as second:
            first.run(tf.tables_initializer(), {source: [1, 2]})
            second.run(tf.tables_initializer(), {source: [10, 20]})
            first.run(iterator.initializer)
            second.run(iterator.initializer)
            assert [first.run(element) for _ in range(2)] == [2, 1]
            assert [second.run(element) for _ in range(2)] == [20, 10]


def test_the_tutorial_pipeline_through_a_remote_session(tmp_path):
    server = tf.train.Server.create_local_server()
    try:
        with tf.Graph().as_default():
            batch, iterator = _nmt_pipeline(tmp_path)
            scale = tf.Variable(3, dtype=tf.int32)
            doubled = tf.data.Dataset.range(3).map(
                lambda x: tf.cast(x, tf.int32) * scale).make_initializable_iterator()
            with tf.Session(server.target) as sess:
                sess.run([tf.tables_initializer(), tf.global_variables_initializer()],
                         options=BOUNDED)
                sess.run([iterator.initializer, doubled.initializer], options=BOUNDED)
                _check_nmt_batches(_read_all(sess, batch))
                assert [int(v) for v in _read_all(sess, doubled.get_next())] == [0, 3, 6]
    finally:
        server.stop()


def test_a_pipeline_read_without_a_session_refuses_tables_naming_them():
    """as_numpy_iterator runs no session, so no table can have been initialised: the case
    that still cannot work, refused with what to do."""
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([b"a"]), tf.constant([1], tf.int64)), -1, name="plain_vocab")
        words = tf.data.Dataset.from_tensor_slices(np.array([b"a"], dtype=object))
        with pytest.raises(ValueError, match="plain_vocab.*through an iterator"):
            list(words.map(table.lookup).as_numpy_iterator())


def test_an_iterator_on_another_worker_uses_that_tasks_table_and_variable():
    """The iterator is colocated with what its functions use, so the table and the variable
    live on the task whose resource manager runs the functions."""
    workers, ps_servers = tf.test.create_local_cluster(2, 1)
    try:
        with tf.Graph().as_default():
            table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
                tf.constant([b"x", b"y"]), tf.constant([5, 6], tf.int64)), -1)
            offset = tf.Variable(100, dtype=tf.int64)
            words = tf.data.Dataset.from_tensor_slices(np.array([b"y", b"z", b"x"], object))
            with tf.device("/job:worker/task:1"):
                iterator = words.map(lambda w: table.lookup(w) + offset) \
                    .make_initializable_iterator()
                element = iterator.get_next()
            with tf.Session(workers[0].target) as sess:
                sess.run([tf.tables_initializer(), tf.global_variables_initializer()],
                         options=BOUNDED)
                sess.run(iterator.initializer, options=BOUNDED)
                assert [int(v) for v in _read_all(sess, element)] == [106, 99, 105]
    finally:
        for server in workers + ps_servers:
            server.stop()


def test_a_variable_on_another_task_than_the_iterator_is_refused_naming_both():
    """The case that still cannot work: a function body runs on its iterator's task only."""
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            weight = tf.Variable(1.0, name="ps_weight")
        dataset = tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32) * weight)
        with tf.device("/job:worker/task:0"):
            with pytest.raises(ValueError, match="ps_weight.*job:ps.*job:worker"):
                dataset.make_initializable_iterator()


def test_tables_in_flat_map_inner_datasets_and_in_filter():
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([b"a", b"b", b"c"]), tf.constant([1, 2, 3], tf.int64)), 0)
        lines = tf.data.Dataset.from_tensor_slices(np.array([b"a b", b"c x a"], object))
        ids = lines.flat_map(lambda line: tf.data.Dataset.from_tensor_slices(
            tf.string_split([line]).values).map(table.lookup))
        known = lines.flat_map(lambda line: tf.data.Dataset.from_tensor_slices(
            tf.string_split([line]).values)).filter(lambda word: table.lookup(word) > 1)
        first, second = ids.make_initializable_iterator(), known.make_initializable_iterator()
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            sess.run([first.initializer, second.initializer])
            assert [int(v) for v in _read_all(sess, first.get_next())] == [1, 2, 3, 0, 1]
            assert _read_all(sess, second.get_next()) == [b"b", b"c"]
