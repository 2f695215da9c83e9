"""A while_loop keeps its iterations' values only for a gradient that reads them: a long loop
run without one holds one iteration's arrays, not all of them (measured with tracemalloc, which
sees NumPy's allocations)."""
import tracemalloc

import numpy as np
import pytest

import tensorweave as tf

ITERATIONS, SIZE = 300, 1 << 16  # 256 KiB a step: 75 MiB if every iteration were kept


def _loop():
    x = tf.placeholder(tf.float32, [SIZE])
    _, out = tf.while_loop(lambda i, v: i < ITERATIONS, lambda i, v: (i + 1, v * 1.0001 + 1.0),
                           [tf.constant(0), x])
    return x, out


def _peak_mib(sess, fetch, feeds):
    sess.run(fetch, feeds)  # plans built outside the measurement
    tracemalloc.start()
    try:
        sess.run(fetch, feeds)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


@pytest.mark.timeout(120)
def test_a_loop_without_a_gradient_keeps_no_history():
    x, out = _loop()
    feeds = {x: np.zeros(SIZE, np.float32)}
    with tf.Session() as sess:
        assert _peak_mib(sess, out, feeds) < 20


@pytest.mark.timeout(120)
def test_a_gradient_still_gets_every_iteration():
    x, out = _loop()
    grad = tf.gradients(tf.reduce_sum(out), x)[0]
    feeds = {x: np.zeros(SIZE, np.float32)}
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad, feeds), np.full(SIZE, 1.0001 ** ITERATIONS),
                                   rtol=1e-4)
        assert _peak_mib(sess, grad, feeds) > 50  # the history is there when it is read
        assert _peak_mib(sess, out, feeds) < 20  # and not kept for a step that only runs out
