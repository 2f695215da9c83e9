"""Issue 14's graph features in a real cluster (one `tensorweave server` process per task on
127.0.0.1): a tf.function call and an autograph cond run on a worker against a ps variable,
a session handle keeps a worker-side value between runs, and quantized and bfloat16 tensors
cross the wire between tasks."""
import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.cluster_util import ServerProcesses

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def servers():
    with ServerProcesses({"ps": 1, "worker": 1}) as processes:
        yield processes


def test_function_call_handles_and_narrow_dtypes_across_tasks(servers):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable([1.0, -2.0], name="w")
            quantized = tf.quantize(w * 0.25, -1.0, 1.0, tf.qint8).output
            narrow = tf.to_bfloat16(w / 3.0)

        @tf.function
        def scaled(x):
            if tf.reduce_sum(x * w) > 0:
                return x * w
            return -x * w

        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [2])
            y = scaled(x)
            loss = tf.reduce_sum(y * y)
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            back = tf.dequantize(quantized, -1.0, 1.0) * 4.0
            widened = tf.cast(narrow, tf.float32)
            handle_t = tf.get_session_handle(y + 1.0)
            holder, kept = tf.get_session_tensor("", tf.float32)
            kept_twice = kept * 2.0
        with tf.Session(servers.target("worker", 0)) as sess:
            sess.run(w.initializer)
            assert sess.run(y, {x: [3.0, 1.0]}).tolist() == [3.0, -2.0]
            assert sess.run(y, {x: [-3.0, 4.0]}).tolist() == [3.0, 8.0]
            before = sess.run(loss, {x: [3.0, 1.0]})
            sess.run(train, {x: [3.0, 1.0]})
            assert sess.run(loss, {x: [3.0, 1.0]}) < before
            w_value = sess.run(w)
            np.testing.assert_allclose(w_value, [1.0 - 0.1 * 18.0, -2.0 + 0.1 * 4.0], rtol=1e-6)
            got_back, got_widened = sess.run([back, widened])
            handle = sess.run(handle_t, {x: [1.0, 1.0]})
            sign = 1.0 if w_value.sum() > 0 else -1.0  # the branch the function takes
            expected = sign * w_value + 1.0
            np.testing.assert_allclose(sess.run(kept_twice, {holder: handle}), expected * 2,
                                       rtol=1e-6)
            handle.delete()
    np.testing.assert_allclose(got_back, w_value, atol=4.0 / 255 * 1.01)
    np.testing.assert_allclose(got_widened,
                               (w_value / 3.0).astype(ml_dtypes.bfloat16).astype(np.float32))
