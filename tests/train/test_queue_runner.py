"""QueueRunner and Coordinator: an input pipeline fed by threads, stopped cleanly, and errors
reported through the coordinator. Every thread is joined with a bound."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf


def counting_pipeline(capacity=4):
    counter = tf.Variable(0, dtype=tf.int64, name="counter")
    queue = tf.FIFOQueue(capacity, [tf.int64], shapes=[[]])
    enqueue = queue.enqueue([tf.assign_add(counter, tf.constant(1, tf.int64))])
    runner = tf.train.QueueRunner(queue, [enqueue])
    tf.train.add_queue_runner(runner)
    return counter, queue, runner


def test_queue_runner_feeds_a_training_loop_and_stops_on_request():
    counter, queue, runner = counting_pipeline()
    batch = queue.dequeue_many(3)
    with tf.Session() as sess:
        sess.run(counter.initializer)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            assert len(threads) == 2  # one enqueue thread, one that cancels on stop
            seen = []
            for _ in range(4):
                seen.extend(sess.run(batch, options=tf.RunOptions(timeout_in_ms=10_000)))
            assert seen == list(range(1, 13))
        finally:
            coord.request_stop()
            start = time.monotonic()
            coord.join(threads, stop_grace_period_secs=5)
        assert time.monotonic() - start < 2.0
        assert not any(t.is_alive() for t in threads)
        assert sess.run(queue.is_closed())


def test_queue_is_closed_when_the_enqueue_ops_run_out_of_input():
    source = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    fill = source.enqueue_many([[1, 2, 3]])
    close_source = source.close()
    target = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    runner = tf.train.QueueRunner(target, [target.enqueue([source.dequeue() * 10])])
    with tf.Session() as sess:
        sess.run(fill)
        sess.run(close_source)
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, daemon=True)
        try:
            assert runner.create_threads(sess, coord=coord) == []  # already made for sess
            for thread in threads:
                thread.start()
            drained = []
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    drained.append(sess.run(target.dequeue(),
                                            options=tf.RunOptions(timeout_in_ms=10_000)))
            assert drained == [10, 20, 30]
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)


def test_an_error_in_a_runner_stops_the_coordinator_and_join_raises_it():
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[2]])
    loose = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0]), [None])
    runner = tf.train.QueueRunner(queue, [queue.enqueue([loose])])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, start=True, daemon=True)
        assert coord.wait_for_stop(5.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="component 0"):
            coord.join(threads, stop_grace_period_secs=5)


def test_coordinator_clean_stop_exceptions_and_stop_on_exception():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "end of input")
    assert coord.should_stop()
    coord.join([], stop_grace_period_secs=1)  # a clean stop raises nothing
    coord.clear_stop()
    assert not coord.should_stop()

    def worker():
        with coord.stop_on_exception():
            raise ValueError("bad batch")

    thread = threading.Thread(target=worker)
    thread.start()
    with pytest.raises(ValueError, match="bad batch"):
        coord.join([thread], stop_grace_period_secs=5)
    assert coord.joined


def test_coordinator_complains_about_threads_that_ignore_the_stop():
    coord = tf.train.Coordinator()
    release = threading.Event()
    stubborn = threading.Thread(target=lambda: release.wait(10), name="stubborn")
    stubborn.start()
    coord.request_stop()
    try:
        with pytest.raises(RuntimeError, match="stubborn"):
            coord.join([stubborn], stop_grace_period_secs=0.1)
    finally:
        release.set()
        stubborn.join(5)


def test_closing_the_session_ends_runner_threads_blocked_on_a_full_queue():
    counter, queue, runner = counting_pipeline(capacity=2)
    sess = tf.Session()
    sess.run(counter.initializer)
    threads = runner.create_threads(sess, start=True, daemon=True)
    deadline = time.monotonic() + 5
    while sess.run(queue.size()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # the queue fills; then the enqueue thread waits for room
    assert sess.run(queue.size()) == 2
    sess.close()
    for thread in threads:
        thread.join(5)
    assert not any(t.is_alive() for t in threads)
    assert np.array(runner.exceptions_raised).size == 0
