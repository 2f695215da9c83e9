"""The iterator ops in graphs: one-shot, initializable, from_structure, string handles, the end
of data, errors, GraphDef round trips, host-CPU placement and prefetch threads."""
import gc
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data import prefetch
from tensorweave.ops import dataset_ops

COVERED_OP_TYPES = {"IteratorV2", "OneShotIterator", "MakeIterator", "IteratorGetNext",
                    "IteratorGetNextOrEmpty", "IteratorToStringHandle",
                    "IteratorFromStringHandle"}
Dataset = tf.data.Dataset


def drain(sess, tensor, feed=None, limit=1000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(tensor, feed))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("the iterator did not end")


def test_one_shot_iterator_reads_everything_then_raises_out_of_range():
    dataset = Dataset.from_tensor_slices((np.arange(5), np.arange(5) * 2.0)).batch(2)
    iterator = dataset.make_one_shot_iterator()
    first, second = iterator.get_next()
    assert first.op.type == "IteratorGetNext" and iterator._handle.op.type == "OneShotIterator"
    assert first.shape.as_list() == [None] and first.dtype == tf.int64
    with tf.Session() as sess:
        batches = drain(sess, (first, second))
        with pytest.raises(tf.errors.OutOfRangeError):  # stays at the end
            sess.run(first)
    assert [b[0].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    np.testing.assert_array_equal(batches[2][1], [8.0])


def test_each_session_gets_its_own_iterator():
    next_value = Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as first, tf.Session() as second:
        assert first.run(next_value) == 0 and first.run(next_value) == 1
        assert second.run(next_value) == 0


def test_initializable_iterator_binds_fed_values_and_restarts():
    data = tf.placeholder(tf.float32, [None, 2])
    limit = tf.placeholder(tf.int64, [])
    dataset = Dataset.from_tensor_slices(data).take(limit)
    iterator = dataset.make_initializable_iterator()
    assert iterator.initializer.type == "MakeIterator"
    assert {t.name for t in iterator.initializer.inputs[1:]} == {data.name, limit.name}
    element = iterator.get_next()
    assert element.shape.as_list() == [2]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="initializer"):
            sess.run(element)
        values = np.arange(8, dtype=np.float32).reshape(4, 2)
        sess.run(iterator.initializer, {data: values, limit: 3})
        assert np.asarray(drain(sess, element)).tolist() == values[:3].tolist()
        sess.run(iterator.initializer, {data: values * 10, limit: 1})
        assert np.asarray(drain(sess, element)).tolist() == [[0.0, 10.0]]


def test_one_shot_iterator_refuses_a_dataset_that_needs_a_feed():
    data = tf.placeholder(tf.int64, [None])
    with pytest.raises(ValueError, match="make_initializable_iterator"):
        Dataset.from_tensor_slices(data).make_one_shot_iterator()
    constant = tf.constant([4, 5])  # constants are folded, not captured
    assert Dataset.from_tensor_slices(constant).make_one_shot_iterator() is not None


def test_from_structure_switches_between_datasets_of_one_structure():
    train = Dataset.range(100, 200).batch(4)
    test = Dataset.range(3).batch(4)
    iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    assert iterator._handle.op.type == "IteratorV2"
    batch = iterator.get_next()
    train_init, test_init = iterator.make_initializer(train), iterator.make_initializer(test)
    with tf.Session() as sess:
        sess.run(train_init)
        assert sess.run(batch).tolist() == [100, 101, 102, 103]
        sess.run(test_init)
        assert sess.run(batch).tolist() == [0, 1, 2]
        sess.run(train_init)
        assert sess.run(batch).tolist() == [100, 101, 102, 103]
    with pytest.raises(TypeError, match="element types"):
        iterator.make_initializer(Dataset.from_tensors(1.0))
    with pytest.raises(ValueError, match="no initializer"):
        iterator.initializer  # noqa: B018


def test_string_handles_pick_the_iterator_per_step():
    train = Dataset.range(1000).repeat()
    test = Dataset.range(-3, 0)
    handle = tf.placeholder(tf.string, [])
    iterator = tf.data.Iterator.from_string_handle(handle, train.output_types,
                                                   train.output_shapes)
    element = iterator.get_next()
    assert iterator._handle.op.type == "IteratorFromStringHandle"
    train_iterator = train.make_one_shot_iterator()
    test_iterator = test.make_initializable_iterator()
    to_string = train_iterator.string_handle()
    assert to_string.op.type == "IteratorToStringHandle"
    with tf.Session() as sess:
        train_handle, test_handle = sess.run([to_string, test_iterator.string_handle()])
        assert [sess.run(element, {handle: train_handle}) for _ in range(3)] == [0, 1, 2]
        sess.run(test_iterator.initializer)
        assert drain(sess, element, {handle: test_handle}) == [-3, -2, -1]
        assert sess.run(element, {handle: train_handle}) == 3  # train resumes where it was
        with pytest.raises(tf.errors.InvalidArgumentError, match="not an iterator handle"):
            sess.run(element, {handle: b"garbage"})


def test_a_string_handle_of_another_structure_is_rejected():
    ints = Dataset.range(3).make_one_shot_iterator()
    handle = tf.placeholder(tf.string, [])
    floats = tf.data.Iterator.from_string_handle(handle, tf.float32, []).get_next()
    with tf.Session() as sess:
        token = sess.run(ints.string_handle())
        with pytest.raises(tf.errors.InvalidArgumentError, match="int64"):
            sess.run(floats, {handle: token})


def test_handle_of_a_collected_session_names_no_live_iterator():
    string_handle = Dataset.range(3).make_one_shot_iterator().string_handle()
    handle = tf.placeholder(tf.string, [])
    element = tf.data.Iterator.from_string_handle(handle, tf.int64, []).get_next()
    sess = tf.Session()
    token = sess.run(string_handle)
    sess.close()
    del sess
    gc.collect()
    with tf.Session() as other:
        with pytest.raises(tf.errors.NotFoundError, match="no live iterator"):
            other.run(element, {handle: token})


def test_errors_of_a_map_function_name_the_failing_op():
    dataset = Dataset.from_generator(lambda: iter([[1.0, 2.0, 3.0]]), tf.float32, [None]).map(
        lambda x: tf.reshape(x, [2, 2], name="bad_reshape"))
    element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_reshape"):
            sess.run(element)


def test_graph_def_round_trip_keeps_the_dataset_reachable_in_process():
    data = tf.placeholder(tf.int64, [None], name="data")
    iterator = Dataset.from_tensor_slices(data).map(lambda v: v * 2).make_initializable_iterator()
    element = iterator.get_next(name="element")
    initializer_name, element_name = iterator.initializer.name, element.name
    graph_def = tf.get_default_graph().as_graph_def()
    tf.reset_default_graph()
    del iterator, element, data
    gc.collect()
    tf.import_graph_def(graph_def, name="")
    graph = tf.get_default_graph()
    with tf.Session() as sess:
        sess.run(initializer_name, {"data:0": [1, 2, 3]})
        assert drain(sess, graph.get_tensor_by_name(element_name)) == [2, 4, 6]


def test_an_unknown_dataset_key_is_a_clear_error():
    handle = dataset_ops.iterator([tf.int64], [[]])
    init = dataset_ops.make_iterator(handle, "dataset:0:from another process")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="only in the process that built"):
            sess.run(init)


def test_iterator_ops_run_on_the_host_cpu_of_their_task():
    with tf.device("/job:worker/task:3/device:GPU:1"):
        iterator = Dataset.range(4).make_initializable_iterator()
        element = iterator.get_next()
    assert iterator._handle.op.device == "/job:worker/task:3/device:CPU:0"
    assert element.op.device == iterator._handle.op.device
    assert iterator.initializer.device == iterator._handle.op.device
    with tf.device("/job:worker/task:1"):
        one_shot = Dataset.range(2).make_one_shot_iterator()
    assert one_shot._handle.op.device == "/job:worker/task:1"


def test_function_form_registers_the_initializer_for_session_scaffolds():
    iterator = tf.data.make_initializable_iterator(Dataset.range(2))
    assert iterator.initializer in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)
    assert tf.data.make_one_shot_iterator(Dataset.range(2)).output_types == tf.int64


def test_static_shapes_and_structures_of_get_next():
    dataset = Dataset.from_tensor_slices({"image": np.zeros((10, 28, 28), np.uint8),
                                          "label": np.zeros(10, np.int64)}).batch(
        32, drop_remainder=True)
    element = dataset.make_one_shot_iterator().get_next()
    assert sorted(element) == ["image", "label"]
    assert element["image"].shape.as_list() == [32, 28, 28]
    assert element["image"].dtype == tf.uint8 and element["label"].shape.as_list() == [32]


def _wait_for_no_prefetch_threads(deadline_s=5.0):
    end = time.monotonic() + deadline_s
    while prefetch.live_prefetch_threads() and time.monotonic() < end:
        gc.collect()
        time.sleep(0.05)
    return prefetch.live_prefetch_threads()


@pytest.mark.timeout(30)
def test_prefetch_threads_stop_on_reinitialization_and_with_their_session():
    assert not _wait_for_no_prefetch_threads()
    iterator = Dataset.range(10 ** 9).prefetch(4).make_initializable_iterator()
    element = iterator.get_next()
    sess = tf.Session()
    sess.run(iterator.initializer)
    assert sess.run(element) == 0
    assert len(prefetch.live_prefetch_threads()) == 1
    sess.run(iterator.initializer)  # the old pipeline's producer stops
    assert sess.run(element) == 0
    end = time.monotonic() + 5
    while len(prefetch.live_prefetch_threads()) > 1 and time.monotonic() < end:
        time.sleep(0.02)
    assert len(prefetch.live_prefetch_threads()) == 1
    sess.close()
    del sess
    assert not _wait_for_no_prefetch_threads()


def test_ops_are_not_differentiable():
    x = Dataset.from_tensors(np.float32(1.0)).make_one_shot_iterator().get_next()
    assert tf.gradients(x * 2.0, [x])[0] is not None
    assert tf.gradients(x, [tf.get_default_graph().get_operations()[0].outputs[0]])[0] is None


def test_get_next_or_empty_gives_a_flag_and_zeros_at_the_end():
    iterator = Dataset.from_tensor_slices(np.arange(6.0).reshape(2, 3)).make_one_shot_iterator()
    has_value, (row,) = dataset_ops.iterator_get_next_or_empty(
        iterator._handle, [tf.float64], [tf.TensorShape([None])])
    assert has_value.op.type == "IteratorGetNextOrEmpty" and has_value.shape.as_list() == []
    assert row.shape.as_list() == [None]
    with tf.Session() as sess:
        steps = [sess.run((has_value, row)) for _ in range(3)]
    assert [bool(flag) for flag, _ in steps] == [True, True, False]
    assert [value.tolist() for _, value in steps] == [[0, 1, 2], [3, 4, 5], []]
