"""Every step can be stopped: a deadline, closing the session or a failing op anywhere ends
the whole step quickly with the right error, no thread stays blocked, and the session keeps
working (except after close)."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.cancellation import CancellationToken
from tensorweave.runtime.rendezvous import LocalRendezvous, make_key, parse_key

TWO_CPUS = dict(device_count={"CPU": 2})


def session_threads():
    """The executor's threads: device lanes and the blocking-op pool."""
    return [t for t in threading.enumerate()
            if t.name.startswith(("tensorweave lane", "tensorweave blocking op"))]


def test_deadline_stops_a_blocked_step_and_the_session_stays_usable():
    queue = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
    taken = queue.dequeue()
    with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="deadline of 200 ms"):
            sess.run(taken, options=tf.RunOptions(timeout_in_ms=200))
        assert 0.19 < time.monotonic() - start < 1.0
        sess.run(queue.enqueue([7.0]))
        assert sess.run(taken) == 7.0  # the cancelled dequeue took nothing
        assert sess.run(queue.size()) == 0


def test_operation_timeout_from_the_config_applies_to_every_step():
    queue = tf.FIFOQueue(1, [tf.float32], shapes=[[]])
    config = tf.ConfigProto(operation_timeout_in_ms=150)
    with tf.Session(config=config) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(queue.dequeue())
        assert time.monotonic() - start < 1.0


def test_a_failing_op_ends_the_step_while_another_device_waits_on_a_recv():
    queue = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
    images = tf.placeholder(tf.float32, [None], name="images")
    with tf.device("/cpu:0"):
        waiting = queue.dequeue() * 2.0  # blocks: nobody enqueues
    with tf.device("/cpu:1"):
        from_cpu0 = waiting + 1.0        # its Recv waits for cpu:0
        broken = tf.reshape(images, [2, 2], name="broken")
    with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run([from_cpu0, broken], {images: [1.0, 2.0, 3.0]})
        assert time.monotonic() - start < 1.0
        assert info.value.op.name == "broken" and "broken" in str(info.value)
        # Nothing was lost or left waiting: the next step works.
        sess.run(queue.enqueue([1.5]))
        values = sess.run([from_cpu0, broken], {images: [1.0, 2.0, 3.0, 4.0]})
        assert values[0] == 4.0
        np.testing.assert_array_equal(values[1], [[1, 2], [3, 4]])


def test_a_failure_on_the_sending_device_reaches_the_receiver():
    images = tf.placeholder(tf.float32, [None])
    with tf.device("/cpu:0"):
        broken = tf.reshape(images, [2, 2], name="broken_on_cpu0")
    with tf.device("/cpu:1"):
        total = tf.reduce_sum(broken * 2.0)
    with tf.Session(config=tf.ConfigProto(**TWO_CPUS)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="broken_on_cpu0"):
            sess.run(total, {images: [1.0, 2.0, 3.0]})
        assert sess.run(total, {images: [1.0, 2.0, 3.0, 4.0]}) == 20.0


def test_closing_the_session_cancels_running_steps_and_stops_its_threads():
    queue = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
    accumulator = tf.ConditionalAccumulator(tf.float32, shape=[])
    before = set(session_threads())
    sess = tf.Session(config=tf.ConfigProto(**TWO_CPUS))
    outcomes = []

    def run(fetch):
        try:
            sess.run(fetch)
        except Exception as exc:  # noqa: BLE001 - recorded for the assertions
            outcomes.append(exc)

    workers = [threading.Thread(target=run, args=(fetch,))
               for fetch in (queue.dequeue(), accumulator.take_grad(1))]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + 5
    while len(sess._active_steps) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # until both steps wait inside the session
    assert len(sess._active_steps) == 2 and set(session_threads()) - before
    start = time.monotonic()
    sess.close()
    for worker in workers:
        worker.join(2.0)
    assert time.monotonic() - start < 1.0
    assert not any(worker.is_alive() for worker in workers)
    assert len(outcomes) == 2
    assert all(isinstance(exc, tf.errors.CancelledError) for exc in outcomes)
    assert "closed" in str(outcomes[0])
    assert not [t for t in session_threads() if t not in before and t.is_alive()]
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(queue.size())


def test_cancelled_steps_leave_no_blocking_thread_behind():
    queue = tf.FIFOQueue(1, [tf.float32], shapes=[[]])
    before = set(session_threads())
    with tf.Session() as sess:
        for _ in range(5):
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(queue.dequeue(), options=tf.RunOptions(timeout_in_ms=20))
        busy = [t for t in session_threads() if "blocking" in t.name and t not in before]
        # Each cancelled dequeue returned its thread to the pool: one is enough for all five.
        assert len(busy) == 1


def test_token_reports_the_first_error_and_calls_back_once():
    token = CancellationToken()
    calls = []
    callback_id = token.add_callback(calls.append)
    removed = token.add_callback(lambda error: calls.append("removed"))
    token.remove_callback(removed)
    first = tf.errors.DeadlineExceededError(None, None, "first")
    assert token.cancel(first) is True
    assert token.cancel(tf.errors.CancelledError(None, None, "second")) is False
    assert token.error is first and token.cancelled and calls == [first]
    late = []
    token.add_callback(late.append)  # already cancelled: called at once
    assert late == [first]
    with pytest.raises(tf.errors.DeadlineExceededError):
        token.raise_if_cancelled()
    assert callback_id is not None


def test_rendezvous_matches_send_and_receive_in_either_order_and_aborts_waiters():
    key = make_key("/device:CPU:0", "/device:CPU:1", "x:0", 7)
    assert parse_key(key) == ("/device:CPU:0", "/device:CPU:1", "x:0", 7)
    rendezvous = LocalRendezvous(7)
    rendezvous.send(key, 1)
    assert rendezvous.recv(key, timeout=1) == 1
    got = []
    rendezvous.recv_async("later", lambda value, error: got.append((value, error)))
    assert got == []
    rendezvous.send("later", 2)
    assert got == [(2, None)]
    with pytest.raises(tf.errors.InternalError, match="sent twice"):
        rendezvous.send("dup", 1)
        rendezvous.send("dup", 1)
    error = tf.errors.AbortedError(None, None, "peer failed")
    waiting = []
    rendezvous.recv_async("never", lambda value, err: waiting.append(err))
    rendezvous.abort(error)
    assert waiting == [error]
    with pytest.raises(tf.errors.AbortedError):
        rendezvous.recv("after_abort", timeout=1)


def test_blocking_recv_honours_cancellation_and_timeout():
    rendezvous = LocalRendezvous(1)
    token = CancellationToken()
    threading.Timer(0.05, token.cancel).start()
    start = time.monotonic()
    with pytest.raises(tf.errors.CancelledError):
        rendezvous.recv("k", token, timeout=5)
    assert time.monotonic() - start < 1.0
    with pytest.raises(tf.errors.DeadlineExceededError):
        LocalRendezvous(2).recv("k", timeout=0.05)
