"""Training with the XLA backend gives what the NumPy path gives: the same parameters after k
steps of the MLP (Adam) and of softmax regression and with every lowered optimizer; variables
kept as device buffers agree with every other observer (fetches, NumPy kernels, Saver); steps
with ops that have no lowering (a queue, a py_func) compile the rest; a new batch size traces
again; the opt-in works by ConfigProto and by environment, and is a no-op without JAX."""
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("jax")

import tensorweave as tf  # noqa: E402
from tensorweave.runtime import xla  # noqa: E402

ON, OFF = tf.OptimizerOptions.ON_1, tf.OptimizerOptions.OFF


def config(level):
    proto = tf.ConfigProto()
    proto.graph_options.optimizer_options.global_jit_level = level
    return proto


def cluster_runners(sess):
    """The compiled clusters of every plan the session built."""
    return [node.compute for plan in sess._plans.values() for part in plan.plans
            for node in part.nodes if node.op_type == xla.CLUSTER_TYPE]


def assert_compiled(sess, numpy_steps=0):
    """Every cluster of the session traced, and ran on NumPy only `numpy_steps` times in all
    (the NumPy fallback gives the same values: agreeing results alone prove nothing)."""
    runners = cluster_runners(sess)
    assert runners and all(r.traces for r in runners)
    assert sum(r.numpy_steps for r in runners) == numpy_steps


def mlp():
    x = tf.placeholder(tf.float32, [None, 784])
    y_ = tf.placeholder(tf.float32, [None, 10])
    h = x
    for seed, (width_in, width_out) in enumerate(((784, 512), (512, 512), (512, 10))):
        w = tf.Variable(tf.truncated_normal([width_in, width_out], stddev=0.05, seed=seed + 1))
        b = tf.Variable(tf.zeros([width_out]))
        h = tf.matmul(h, w) + b
        if width_out != 10:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=h))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return x, y_, loss, train


def softmax_regression(optimizer):
    x = tf.placeholder(tf.float32, [None, 784])
    labels = tf.placeholder(tf.int64, [None])
    w = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))
    logits = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
    return x, labels, loss, accuracy, optimizer.minimize(loss)


def batches(count, size, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        images = rng.random((size, 784), dtype=np.float32)
        classes = rng.integers(0, 10, size)
        out.append((images, classes))
    return out


def train_mlp(level, steps, data):
    graph = tf.Graph()
    with graph.as_default():
        x, y_, loss, train = mlp()
        with tf.Session(config=config(level)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: images, y_: np.eye(10, dtype=np.float32)[c]})[0]
                      for images, c in data[:steps]]
            if level == ON:
                assert_compiled(sess)
            return sess.run(tf.trainable_variables()), losses, cluster_runners(sess)


@pytest.mark.timeout(120)
def test_mlp_adam_gives_the_same_parameters_with_and_without_xla():
    data = batches(4, 32)
    numpy_params, numpy_losses, none = train_mlp(OFF, 4, data)
    xla_params, xla_losses, runners = train_mlp(ON, 4, data)
    assert none == [] and runners, "the session with XLA on compiled its steps"
    np.testing.assert_allclose(xla_losses, numpy_losses, rtol=1e-5)
    for mine, reference in zip(xla_params, numpy_params):
        # Adam divides by sqrt(v): its first steps move a weight by ~lr whatever the size of
        # its gradient, so a weight whose gradients are ~0 turns rounding noise into moves of
        # up to lr (1e-3): a few of the 670k weights differ by ~1% of lr, the rest by far less.
        difference = np.abs(mine - reference)
        assert difference.max() <= 2e-5
        assert np.quantile(difference, 0.999) <= 1e-6


OPTIMIZERS = {
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.5),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.3),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_softmax_regression_trains_the_same_with_each_optimizer(name):
    data = batches(6, 50, seed=1)
    results = []
    for level in (OFF, ON):
        graph = tf.Graph()
        with graph.as_default():
            x, labels, loss, accuracy, train = softmax_regression(OPTIMIZERS[name]())
            with tf.Session(config=config(level)) as sess:
                sess.run(tf.global_variables_initializer())
                for images, classes in data:
                    sess.run(train, {x: images, labels: classes})
                results.append(sess.run(tf.global_variables() + [loss], {x: data[0][0],
                                                                          labels: data[0][1]}))
                if level == ON:
                    assert_compiled(sess)
    for mine, reference in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, reference, rtol=2e-5, atol=1e-6)


@pytest.mark.timeout(120)
def test_variables_fetched_mid_training_and_read_by_numpy_kernels_agree():
    data = batches(4, 20, seed=2)
    fetched, read_by_numpy = [], []
    for level in (OFF, ON):
        graph = tf.Graph()
        with graph.as_default():
            x, labels, loss, _, train = softmax_regression(tf.train.GradientDescentOptimizer(1.))
            w = tf.trainable_variables()[0]
            # py_func has no lowering: its kernel reads the variable on the NumPy path.
            norm = tf.py_func(lambda v: np.float32(np.abs(v).sum()), [w], tf.float32)
            with tf.Session(config=config(level)) as sess:
                sess.run(tf.global_variables_initializer())
                values, norms = [], []
                for images, classes in data:
                    sess.run(train, {x: images, labels: classes})
                    values.append(sess.run(w))
                    norms.append(sess.run(norm))
                fetched.append(values)
                read_by_numpy.append(norms)
                if level == ON:
                    assert_compiled(sess)
    for mine, reference in zip(fetched[1], fetched[0]):
        assert np.abs(reference).sum() > 0  # the weights moved
        np.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(read_by_numpy[1], read_by_numpy[0], rtol=1e-5)
    np.testing.assert_allclose(read_by_numpy[1], [np.abs(v).sum() for v in fetched[1]],
                               rtol=1e-6)


@pytest.mark.timeout(120)
def test_saver_round_trip_of_variables_living_as_device_buffers(tmp_path):
    data = batches(3, 20, seed=3)
    with tf.Graph().as_default():
        x, labels, loss, _, train = softmax_regression(tf.train.AdamOptimizer(0.01))
        saver = tf.train.Saver()
        with tf.Session(config=config(ON)) as sess:
            sess.run(tf.global_variables_initializer())
            for images, classes in data:
                sess.run(train, {x: images, labels: classes})
            assert_compiled(sess)
            path = saver.save(sess, str(tmp_path / "model"))
            saved = sess.run(tf.global_variables())
            sess.run(train, {x: data[0][0], labels: data[0][1]})  # moves them past the save
            moved = sess.run(tf.global_variables())
            assert any(not np.array_equal(a, b) for a, b in zip(saved, moved))
            saver.restore(sess, path)
            restored = sess.run(tf.global_variables())
            # Training continues from the restored buffers as from the saved values.
            after_restore = sess.run([loss, train], {x: data[0][0], labels: data[0][1]})[0]
            assert_compiled(sess)  # the restore's Assigns compiled too
        with tf.Session() as sess:  # the checkpoint, read by the NumPy path
            saver.restore(sess, path)
            from_numpy = sess.run(tf.global_variables())
            numpy_loss = sess.run(loss, {x: data[0][0], labels: data[0][1]})
    for a, b, c in zip(saved, restored, from_numpy):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    np.testing.assert_allclose(after_restore, numpy_loss, rtol=1e-6)


@pytest.mark.timeout(120)
def test_a_queue_and_a_py_func_stay_on_numpy_and_the_rest_compiles():
    rng = np.random.default_rng(4)
    images = rng.random((6, 8, 3), dtype=np.float32)
    results, types = [], []
    for level in (OFF, ON):
        with tf.Graph().as_default():
            queue = tf.FIFOQueue(10, [tf.float32], shapes=[[8, 3]])
            enqueue = queue.enqueue_many([images])
            batch = queue.dequeue()
            doubled = tf.py_func(lambda v: (v * 2).astype(np.float32), [batch], tf.float32)
            doubled.set_shape([8, 3])
            w = tf.Variable(tf.ones([3, 2]))
            loss = tf.reduce_sum(tf.square(tf.nn.relu(tf.matmul(doubled, w)) - 1.0))
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
            with tf.Session(config=config(level)) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(enqueue)
                losses = [sess.run([loss, train])[0] for _ in range(5)]
                metadata = tf.RunMetadata()
                sess.run(train, options=tf.RunOptions(trace_level=3), run_metadata=metadata)
                results.append((losses, sess.run(w)))
                if level == ON:
                    assert_compiled(sess)
                types.append([s.timeline_label for d in metadata.step_stats.dev_stats
                              for s in d.node_stats])
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)
    assert xla.CLUSTER_TYPE not in types[0]
    assert types[1].count(xla.CLUSTER_TYPE) == 1
    assert "QueueDequeueV2" in types[1] and "PyFunc" in types[1]


@pytest.mark.timeout(120)
def test_a_new_batch_size_traces_again_and_a_seen_one_does_not():
    data = batches(1, 40, seed=5)[0]
    with tf.Graph().as_default():
        x, labels, loss, _, train = softmax_regression(tf.train.GradientDescentOptimizer(0.1))
        with tf.Session(config=config(ON)) as sess:
            sess.run(tf.global_variables_initializer())
            runner = None
            for size in (16, 16, 24, 16, 24, 8):
                value = sess.run([loss, train], {x: data[0][:size], labels: data[1][:size]})[0]
                runner = runner or [r for r in cluster_runners(sess) if r.cluster.inputs][0]
                assert np.isfinite(value)
            assert runner.traces == 3  # one per batch size: 16, 24, 8
            assert runner.numpy_steps == 0


@pytest.mark.timeout(60)
def test_bad_inputs_raise_the_numpy_kernels_errors_naming_the_op():
    with tf.Graph().as_default():
        x, labels, loss, _, train = softmax_regression(tf.train.GradientDescentOptimizer(0.1))
        with tf.Session(config=config(ON)) as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
                sess.run(train, {x: np.zeros((2, 784), np.float32), labels: [0, 1]})
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="label value of 12"):
                sess.run(train, {x: np.zeros((2, 784), np.float32), labels: [0, 12]})
            # A good step still runs compiled afterwards: NumPy ran the train step that read
            # uninitialized variables and the one with a bad label.
            sess.run(train, {x: np.ones((2, 784), np.float32), labels: [0, 1]})
            assert_compiled(sess, numpy_steps=2)
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32)  # any shape: the mismatch shows when the step runs
        product = tf.reduce_sum(tf.matmul(a, tf.ones([3, 2])) * 2.0)
        with tf.Session(config=config(ON)) as sess:
            assert sess.run(product, {a: np.ones((1, 3), np.float32)}) == 12.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="MatMul"):
                sess.run(product, {a: np.ones((2, 4), np.float32)})
            assert cluster_runners(sess)[0].traces == 2  # the good shape, then the bad one


@pytest.mark.timeout(60)
def test_environment_variable_turns_xla_on_for_sessions_without_config(monkeypatch):
    monkeypatch.setenv("TENSORWEAVE_XLA", "1")
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None])
        out = tf.reduce_sum(tf.exp(a) * 2.0)
        with tf.Session() as sess:
            metadata = tf.RunMetadata()
            value = sess.run(out, {a: [0.0, 1.0]}, options=tf.RunOptions(trace_level=3),
                             run_metadata=metadata)
            assert_compiled(sess)
    node = metadata.step_stats.dev_stats[0].node_stats[0]
    assert node.timeline_label == xla.CLUSTER_TYPE and "ops)" in node.node_name
    np.testing.assert_allclose(value, 2 * (1 + np.e), rtol=1e-6)


@pytest.mark.timeout(120)
def test_without_jax_the_knob_is_a_no_op_with_one_log_line():
    script = (
        "import sys, logging; sys.modules['jax'] = None\n"  # as if JAX were not installed
        "logging.basicConfig(level=logging.WARNING)\n"
        "import numpy as np, tensorweave as tf\n"
        "assert 'jaxlib' not in sys.modules\n"
        "config = tf.ConfigProto()\n"
        "config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1\n"
        "x = tf.placeholder(tf.float32, [None]); y = tf.reduce_sum(x * 3.0)\n"
        "for _ in range(2):\n"
        "    with tf.Session(config=config) as sess:\n"
        "        print(sess.run(y, {x: [1.0, 2.0]}), sess.run(y * 2.0, {x: [1.0]}))\n")
    env = {k: v for k, v in os.environ.items() if k != "TENSORWEAVE_XLA"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=100, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["9.0", "6.0"] * 2
    assert result.stderr.count("JAX is not installed") == 1, result.stderr


@pytest.mark.timeout(120)
def test_a_small_conv_net_trains_the_same_and_its_conv_gradients_stay_on_numpy():
    rng = np.random.default_rng(6)
    images = rng.random((8, 12, 12, 1), dtype=np.float32)
    classes = rng.integers(0, 4, 8)
    results = []
    for level in (OFF, ON):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 12, 12, 1])
            labels = tf.placeholder(tf.int64, [None])
            w1 = tf.Variable(tf.truncated_normal([3, 3, 1, 4], stddev=0.3, seed=1))
            b1 = tf.Variable(tf.zeros([4]))
            h = tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME") + b1)
            h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
            w2 = tf.Variable(tf.truncated_normal([6 * 6 * 4, 4], stddev=0.1, seed=2))
            logits = tf.matmul(tf.reshape(h, [-1, 6 * 6 * 4]), w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
            train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
            with tf.Session(config=config(level)) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(4):
                    sess.run(train, {x: images, labels: classes})
                metadata = tf.RunMetadata()
                sess.run(loss, {x: images, labels: classes}, run_metadata=metadata,
                         options=tf.RunOptions(trace_level=3))
                results.append(sess.run([w1, b1, w2, loss], {x: images, labels: classes}))
                if level == ON:
                    assert_compiled(sess)
                metadata = tf.RunMetadata()
                sess.run(train, {x: images, labels: classes}, run_metadata=metadata,
                         options=tf.RunOptions(trace_level=3))
                types = [s.timeline_label for d in metadata.step_stats.dev_stats
                         for s in d.node_stats]
    for mine, reference in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, reference, rtol=1e-4, atol=1e-6)
    # The filter and max-pool gradients ran as NumPy kernels, outside every cluster; the
    # forward pass with the dense layer's gradient, and the dense update, compiled around them.
    assert "Conv2DBackpropFilter" in types and "MaxPoolGrad" in types, types
    assert types.count(xla.CLUSTER_TYPE) == 2, types


@pytest.mark.timeout(60)
def test_a_variable_fetched_with_the_step_that_updates_it_shows_the_update():
    seen = []
    for level in (OFF, ON):
        with tf.Graph().as_default():
            w = tf.Variable([1.0, -2.0])
            step = tf.train.get_or_create_global_step()
            loss = tf.reduce_sum(tf.square(w * 3.0))
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
            with tf.Session(config=config(level)) as sess:
                sess.run(tf.global_variables_initializer())
                seen.append([sess.run([train, step, w])[1:] for _ in range(3)])
                if level == ON:
                    assert_compiled(sess)
    # As on the NumPy path (and in TF 1.x scripts' `_, step = run([train_op, global_step])`):
    # the fetched variables hold the values the step left.
    assert [int(s) for s, _ in seen[1]] == [int(s) for s, _ in seen[0]] == [1, 2, 3]
    for (_, mine), (_, reference) in zip(seen[1], seen[0]):
        np.testing.assert_allclose(mine, reference, rtol=1e-6)
