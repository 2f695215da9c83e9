"""Queues and conditional accumulators: TF 1.x semantics, including blocking, closing and
stale gradients, exercised from several threads with bounded waits."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {
    "FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "QueueEnqueueV2",
    "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2",
    "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2", "ConditionalAccumulator",
    "AccumulatorApplyGradient", "AccumulatorTakeGradient", "AccumulatorSetGlobalStep",
    "AccumulatorNumAccumulated"}
SHORT = tf.RunOptions(timeout_in_ms=150)
BOUNDED = tf.RunOptions(timeout_in_ms=10_000)


def later(delay, fn):
    timer = threading.Timer(delay, fn)
    timer.start()
    return timer


def test_fifo_order_sizes_shapes_and_dtypes():
    queue = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], [2]])
    enqueue = queue.enqueue([7, [1.0, 2.0]])
    enqueue_many = queue.enqueue_many([[1, 2, 3], np.arange(6, dtype=np.float32).reshape(3, 2)])
    label, vector = queue.dequeue()
    labels, vectors = queue.dequeue_many(2)
    assert label.dtype == tf.int32 and vector.shape.as_list() == [2]
    assert vectors.shape.as_list() == [2, 2] and labels.shape.as_list() == [2]
    with tf.Session() as sess:
        sess.run(enqueue)
        sess.run(enqueue_many)
        assert sess.run(queue.size()) == 4
        first = sess.run([label, vector])
        assert first[0] == 7 and first[1].dtype == np.float32
        np.testing.assert_array_equal(first[1], [1.0, 2.0])
        batch = sess.run([labels, vectors])
        np.testing.assert_array_equal(batch[0], [1, 2])
        np.testing.assert_array_equal(batch[1], [[0, 1], [2, 3]])
        assert sess.run(queue.size()) == 1


def test_closed_queue_hands_out_what_it_holds_then_out_of_range():
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
    fill = queue.enqueue_many([[1.0, 2.0, 3.0]])
    with tf.Session() as sess:
        sess.run(fill)
        sess.run(queue.close())
        assert sess.run(queue.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="closed"):
            sess.run(queue.enqueue([4.0]))
        with pytest.raises(tf.errors.OutOfRangeError, match="requested 5, current size 3"):
            sess.run(queue.dequeue_many(5))
        np.testing.assert_array_equal(sess.run(queue.dequeue_up_to(2)), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(queue.dequeue_up_to(5)), [3.0])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(queue.dequeue())
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(queue.dequeue_up_to(2))


def test_a_dequeue_waits_for_an_enqueue_from_another_thread():
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
    with tf.Session() as sess:
        timer = later(0.1, lambda: sess.run(queue.enqueue([3.0])))
        start = time.monotonic()
        assert sess.run(queue.dequeue(), options=BOUNDED) == 3.0
        assert time.monotonic() - start >= 0.09
        timer.join(5)


def test_closing_wakes_a_waiting_dequeue_with_out_of_range():
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
    with tf.Session() as sess:
        timer = later(0.1, lambda: sess.run(queue.close()))
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(queue.dequeue_many(2), options=BOUNDED)
        timer.join(5)


def test_a_full_queue_blocks_enqueue_until_there_is_room():
    queue = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[1, 2]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(queue.enqueue([3]), options=SHORT)
        timer = later(0.1, lambda: sess.run(queue.dequeue()))
        sess.run(queue.enqueue([3]), options=BOUNDED)
        timer.join(5)
        np.testing.assert_array_equal(sess.run(queue.dequeue_many(2)), [2, 3])


def test_close_with_cancel_pending_enqueues_cancels_a_waiting_enqueue():
    queue = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        sess.run(queue.enqueue([1]))
        timer = later(0.1, lambda: sess.run(queue.close(cancel_pending_enqueues=True)))
        with pytest.raises(tf.errors.CancelledError):
            sess.run(queue.enqueue([2]), options=BOUNDED)
        timer.join(5)
        assert sess.run(queue.dequeue()) == 1


def test_many_producers_and_consumers_lose_nothing():
    queue = tf.FIFOQueue(5, [tf.int64], shapes=[[]])
    value = tf.placeholder(tf.int64, [])
    enqueue = queue.enqueue([value])
    dequeue = queue.dequeue()
    received = []
    lock = threading.Lock()
    with tf.Session() as sess:
        def produce(offset):
            for i in range(40):
                sess.run(enqueue, {value: offset + i}, options=BOUNDED)

        def consume():
            for _ in range(40):
                item = sess.run(dequeue, options=BOUNDED)
                with lock:
                    received.append(item)

        threads = [threading.Thread(target=produce, args=(k * 1000,)) for k in range(3)]
        threads += [threading.Thread(target=consume) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert not any(thread.is_alive() for thread in threads)
    assert sorted(received) == sorted(k * 1000 + i for k in range(3) for i in range(40))


def test_names_give_dict_components():
    queue = tf.FIFOQueue(4, [tf.int32, tf.string], shapes=[[], []], names=["id", "text"])
    with tf.Session() as sess:
        sess.run(queue.enqueue({"id": 3, "text": "three"}))
        assert sess.run(queue.dequeue()) == {"id": 3, "text": b"three"}
    with pytest.raises(ValueError, match="keys"):
        queue.enqueue({"id": 1})


def test_enqueue_checks_shapes_when_built_and_when_run():
    queue = tf.FIFOQueue(4, [tf.float32], shapes=[[2]])
    with pytest.raises(ValueError, match="not compatible"):
        queue.enqueue([[1.0, 2.0, 3.0]])
    loose = tf.placeholder(tf.float32, [None])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="component 0"):
            sess.run(queue.enqueue([loose]), {loose: [1.0, 2.0, 3.0]})


def test_queues_with_one_shared_name_are_one_queue():
    writer = tf.FIFOQueue(4, [tf.float32], shapes=[[]], shared_name="shared", name="writer")
    reader = tf.FIFOQueue(4, [tf.float32], shapes=[[]], shared_name="shared", name="reader")
    with tf.Session() as sess:
        sess.run(writer.enqueue([9.0]))
        assert sess.run(reader.dequeue()) == 9.0


def test_random_shuffle_queue_mixes_keeps_min_after_dequeue_and_drains_when_closed():
    queue = tf.RandomShuffleQueue(20, min_after_dequeue=3, dtypes=[tf.int32], shapes=[[]],
                                  seed=42)
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([np.arange(10, dtype=np.int32)]))
        first = sess.run(queue.dequeue_many(7))
        with pytest.raises(tf.errors.DeadlineExceededError):  # 3 left: they stay for mixing
            sess.run(queue.dequeue(), options=SHORT)
        sess.run(queue.close())
        rest = sess.run(queue.dequeue_up_to(10))
    assert sorted(list(first) + list(rest)) == list(range(10))
    assert list(first) != list(range(7))


def test_random_shuffle_queue_is_deterministic_with_a_seed():
    orders = []
    for _ in range(2):
        tf.reset_default_graph()
        queue = tf.RandomShuffleQueue(20, 0, [tf.int32], shapes=[[]], seed=7)
        with tf.Session() as sess:
            sess.run(queue.enqueue_many([np.arange(12, dtype=np.int32)]))
            orders.append(list(sess.run(queue.dequeue_many(12))))
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(12))


def test_padding_fifo_queue_pads_each_batch_to_its_largest_element():
    queue = tf.PaddingFIFOQueue(5, [tf.int32, tf.float32], shapes=[[None], [None, 2]])
    sequence = tf.placeholder(tf.int32, [None])
    matrix = tf.placeholder(tf.float32, [None, 2])
    enqueue = queue.enqueue([sequence, matrix])
    padded_sequences, padded_matrices = queue.dequeue_many(2)
    assert padded_sequences.shape.as_list() == [2, None]
    with tf.Session() as sess:
        sess.run(enqueue, {sequence: [1, 2, 3], matrix: np.ones((1, 2))})
        sess.run(enqueue, {sequence: [4], matrix: np.ones((2, 2)) * 2})
        sequences, matrices = sess.run([padded_sequences, padded_matrices])
    np.testing.assert_array_equal(sequences, [[1, 2, 3], [4, 0, 0]])
    np.testing.assert_array_equal(matrices, [[[1, 1], [0, 0]], [[2, 2], [2, 2]]])
    with pytest.raises(ValueError, match="shape"):
        tf.PaddingFIFOQueue(5, [tf.int32], shapes=None)


def test_accumulator_averages_fresh_gradients_and_drops_stale_ones():
    accumulator = tf.ConditionalAccumulator(tf.float32, shape=[2], name="accum")
    grad = tf.placeholder(tf.float32, [2])
    local_step = tf.placeholder(tf.int64, [])
    apply = accumulator.apply_grad(grad, local_step=local_step)
    average = accumulator.take_grad(2)
    count = accumulator.num_accumulated()
    with tf.Session() as sess:
        sess.run(apply, {grad: [1.0, 2.0], local_step: 0})
        sess.run(apply, {grad: [3.0, 6.0], local_step: 0})
        assert sess.run(count) == 2
        result = sess.run(average)
        assert result.dtype == np.float32
        np.testing.assert_array_equal(result, [2.0, 4.0])
        assert sess.run(count) == 0
        # take_grad moved the accumulator's global step to 1: step-0 gradients are stale.
        sess.run(apply, {grad: [100.0, 100.0], local_step: 0})
        assert sess.run(count) == 0
        sess.run(accumulator.set_global_step(5))
        sess.run(apply, {grad: [9.0, 9.0], local_step: 4})
        sess.run(apply, {grad: [1.0, 3.0], local_step: 5})
        sess.run(apply, {grad: [3.0, 5.0], local_step: 6})
        assert sess.run(count) == 2
        np.testing.assert_array_equal(sess.run(average), [2.0, 4.0])


def test_take_grad_blocks_until_enough_gradients_arrive_from_other_threads():
    accumulator = tf.ConditionalAccumulator(tf.float64, shape=[], reduction_type="SUM")
    grad = tf.placeholder(tf.float64, [])
    apply = accumulator.apply_grad(grad, local_step=tf.constant(0, tf.int32))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(accumulator.take_grad(3), options=SHORT)
        workers = [threading.Thread(target=lambda v=v: (time.sleep(0.05 * v),
                                                        sess.run(apply, {grad: float(v)})))
                   for v in (1, 2, 3)]
        for worker in workers:
            worker.start()
        assert sess.run(accumulator.take_grad(3), options=BOUNDED) == 6.0
        for worker in workers:
            worker.join(5)


def test_accumulator_rejects_bad_shapes_dtypes_and_counts():
    accumulator = tf.ConditionalAccumulator(tf.float32, shape=[2])
    with pytest.raises(ValueError, match="shape"):
        accumulator.apply_grad(tf.zeros([3]))
    free = tf.ConditionalAccumulator(tf.float32)
    grad = tf.placeholder(tf.float32, None)
    with tf.Session() as sess:
        sess.run(free.apply_grad(grad), {grad: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
            sess.run(free.apply_grad(grad), {grad: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_required"):
            sess.run(free.take_grad(0))
    with pytest.raises(ValueError, match="reduction_type"):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")


def test_dequeues_are_served_in_the_order_they_came():
    """A dequeue that comes later never overtakes one already waiting, even when it runs on
    the thread that just enqueued (the sync replicas' token barrier relies on it)."""
    import types
    from tensorweave.kernels import data_flow
    from tensorweave.runtime.cancellation import CancellationToken
    queue = data_flow.Queue({"component_types": [tf.int32], "shapes": [tf.TensorShape([])]})
    step = types.SimpleNamespace(cancellation=CancellationToken())
    first = []
    waiting = threading.Thread(target=lambda: first.extend(queue.dequeue_many(step, 1, False)))
    waiting.start()
    deadline = time.monotonic() + 10
    while not queue._dequeuers and time.monotonic() < deadline:  # it waits now
        time.sleep(0.001)
    queue.enqueue(step, [np.array([10, 20], np.int32)], batched=True)
    second = queue.dequeue_many(step, 1, False)
    waiting.join(10)
    assert [int(e[0]) for e in first] == [10] and int(second[0][0]) == 20
    step.cancellation.cancel()
