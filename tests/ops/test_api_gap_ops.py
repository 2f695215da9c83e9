"""The last TF 1.x ops and op-level names: tf.conv (general N-D convolution) against a direct
NumPy convolution with numeric gradients, tf.GradientTape against closed-form derivatives,
tf.random.experimental.index_shuffle / stateless_shuffle (bijective, deterministic per seed),
tf.user_ops.my_fact, tf.check_pinned and tf.tpu (what a build without CUDA or TPUs does),
and the iterator state ops behind tf.data.experimental.make_saveable_from_iterator."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

COVERED_OP_TYPES = {"Fact", "CheckPinned", "ConfigureDistributedTPU", "ShutdownDistributedTPU",
                    "CrossReplicaSum", "SerializeIterator", "DeserializeIterator"}
RNG = np.random.default_rng(21)


def run(fetches, feeds=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feeds)


def conv_reference(x, w, strides, dilations, pads, groups):
    """Channels-last N-D convolution of x [B, spatial..., C] (already padded by `pads`, a
    (before, after) per spatial dim) with w [k..., C/groups, O]."""
    x = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)])
    spatial = w.ndim - 2
    sizes = [(x.shape[1 + i] - (w.shape[i] - 1) * dilations[i] - 1) // strides[i] + 1
             for i in range(spatial)]
    per_in, outs = w.shape[-2], w.shape[-1]
    per_out = outs // groups
    y = np.zeros([x.shape[0]] + sizes + [outs], x.dtype)
    for pos in itertools.product(*[range(s) for s in sizes]):
        for taps in itertools.product(*[range(k) for k in w.shape[:spatial]]):
            index = tuple(p * s + t * d for p, s, t, d in zip(pos, strides, taps, dilations))
            pixel = x[(slice(None),) + index]                     # [B, C]
            for g in range(groups):
                part = pixel[:, g * per_in:(g + 1) * per_in]
                kernel = w[taps][:, g * per_out:(g + 1) * per_out]
                y[(slice(None),) + pos + (slice(g * per_out, (g + 1) * per_out),)] += \
                    part @ kernel
    return y


def same_pads(sizes, kernel, strides, dilations):
    pads = []
    for n, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-n // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    return pads


CONV_CASES = [  # (input shape, filter shape, strides, dilations, padding, groups)
    ((2, 7, 3), (3, 3, 4), (2,), (1,), "SAME", 1),
    ((2, 6, 5, 4), (3, 2, 2, 6), (1, 2), (2, 1), "VALID", 2),
    ((1, 5, 4, 3, 2), (2, 2, 2, 2, 3), (1, 1, 2), (1, 1, 1), "SAME", 1),
    ((2, 5, 6, 2), (2, 3, 2, 3), (1, 1), (1, 1), "EXPLICIT", 1),
]


@pytest.mark.parametrize("in_shape,w_shape,strides,dilations,padding,groups", CONV_CASES)
def test_conv_matches_numpy(in_shape, w_shape, strides, dilations, padding, groups):
    x = RNG.standard_normal(in_shape).astype(np.float32)
    w = RNG.standard_normal(w_shape).astype(np.float32)
    spatial = len(in_shape) - 2
    explicit = [(1, 0), (2, 1)][:spatial] if padding == "EXPLICIT" else None
    flat = [0, 0] + [v for pair in explicit for v in pair] + [0, 0] if explicit else []
    got = run(tf.conv(x, w, [1, *strides, 1], padding, explicit_paddings=flat,
                      dilations=[1, *dilations, 1], groups=groups))
    pads = explicit if explicit else same_pads(in_shape[1:-1], w_shape[:-2], strides,
                                               dilations) if padding == "SAME" \
        else [(0, 0)] * spatial
    want = conv_reference(x, w, strides, dilations, pads, groups)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv_channels_first_and_batch_dims():
    x = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)   # [2, 3] batch, C=4 first
    w = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    got = run(tf.conv(x, w, [1, 1, 1, 1], "VALID", data_format="CHANNELS_FIRST",
                      batch_dims=2))
    last = np.moveaxis(x.reshape(6, 4, 5, 6), 1, -1)
    want = np.moveaxis(conv_reference(last, w, (1, 1), (1, 1), [(0, 0)] * 2, 1), -1, 1)
    np.testing.assert_allclose(got, want.reshape(2, 3, 5, 4, 4), rtol=1e-4, atol=1e-4)


def test_conv_gradients_numerically():
    x = tf.constant(RNG.standard_normal((1, 5, 4, 4)))
    w = tf.constant(RNG.standard_normal((2, 2, 2, 4)))
    y = tf.conv(x, w, [1, 2, 1, 1], "SAME", dilations=[1, 1, 2, 1], groups=2)
    with tf.Session():
        for source in (x, w):
            err = gradient_checker.compute_gradient_error(source, source.shape.as_list(), y,
                                                          y.shape.as_list())
            assert err < 1e-6


def test_conv_bad_arguments_are_named():
    x, w = tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 2, 3])
    with pytest.raises(ValueError, match="tf.conv: strides must have 4"):
        tf.conv(x, w, [1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="tf.conv: padding"):
        tf.conv(x, w, [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError, match="groups=2"):
        tf.conv(x, w, [1, 1, 1, 1], "SAME", groups=2)
    with pytest.raises(ValueError, match="explicit_paddings"):
        tf.conv(x, w, [1, 1, 1, 1], "EXPLICIT", explicit_paddings=[1, 1] * 4)


def test_gradient_tape_records_only_its_block():
    x = tf.constant([1.0, 2.0, 3.0])
    w = tf.Variable([0.5, -1.0, 2.0])
    before = x * 2.0
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x * w)
        z = tf.reduce_sum(before * before)
        with tape.stop_recording():
            frozen = x * 3.0
        u = tf.reduce_sum(frozen * x)
        unwatched = tf.constant(4.0)
        v = unwatched * tf.reduce_sum(x)
    grad_x, grad_w = tape.gradient(y, [x, w])
    assert tape.gradient(z, x) is None                      # built before the block
    assert tape.gradient(v, unwatched) is None              # never watched
    zero = tape.gradient(v, unwatched, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert [var.op.name for var in tape.watched_variables()] == [w.op.name]
    values = run([grad_x, grad_w, tape.gradient(u, x), zero,
                  tape.gradient({"y": y}, {"a": x})["a"]])
    xs, ws = np.array([1.0, 2, 3]), np.array([0.5, -1, 2])
    np.testing.assert_allclose(values[0], 2 * xs * ws)
    np.testing.assert_allclose(values[1], xs ** 2)
    np.testing.assert_allclose(values[2], 3 * xs)           # `frozen` is a constant to the tape
    assert values[3] == 0.0
    np.testing.assert_allclose(values[4], 2 * xs * ws)


def test_gradient_tape_jacobians_and_persistence():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x * tf.constant([1.0, -1.0])
    jac = tape.jacobian(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        rows = tf.stack([x[:, 0] * x[:, 1], x[:, 0] ** 3], axis=1)   # [batch 2, 2]
    batch_jac = tape2.batch_jacobian(rows, x)
    got_jac, got_batch = run([jac, batch_jac])
    xs = np.array([[1.0, 2], [3, 4]])
    want = np.zeros((2, 2, 2, 2))
    for i, j in itertools.product(range(2), range(2)):
        want[i, j, i, j] = 2 * xs[i, j] * (1 if j == 0 else -1)
    np.testing.assert_allclose(got_jac, want)
    want_batch = np.stack([[[xs[b, 1], xs[b, 0]], [3 * xs[b, 0] ** 2, 0]] for b in range(2)])
    np.testing.assert_allclose(got_batch, want_batch)


def test_index_shuffle_is_a_seeded_bijection():
    for max_index in (0, 6, 100):
        perm = run(tf.random.experimental.index_shuffle(tf.range(max_index + 1), [5, 9],
                                                        max_index))
        assert sorted(perm.tolist()) == list(range(max_index + 1))
        again = run(tf.random.experimental.index_shuffle(tf.range(max_index + 1), [5, 9],
                                                         max_index))
        np.testing.assert_array_equal(perm, again)
    other = run(tf.random.experimental.index_shuffle(tf.range(101), [6, 9], 100))
    assert not np.array_equal(perm, other)
    with pytest.raises(ValueError, match="seed must have shape"):
        tf.random.experimental.index_shuffle(3, [1, 2, 3, 4], 9)


def test_stateless_shuffle_permutes_rows_deterministically():
    value = np.arange(24).reshape(8, 3)
    first = run(tf.random.experimental.stateless_shuffle(value, seed=[8, 9]))
    second = run(tf.random.experimental.stateless_shuffle(value, seed=[8, 9]))
    np.testing.assert_array_equal(first, second)
    assert sorted(map(tuple, first.tolist())) == sorted(map(tuple, value.tolist()))
    assert not np.array_equal(first, value)
    assert run(tf.random.experimental.stateless_shuffle(tf.zeros([0, 2]), [1, 2])).shape == \
        (0, 2)


def test_my_fact_and_check_pinned():
    assert run(tf.user_ops.my_fact()) == b"0! == 1"
    checked = tf.check_pinned(tf.constant([1.0, 2.0]))
    assert checked.shape.as_list() == [2]
    with pytest.raises(tf.errors.FailedPreconditionError, match="without CUDA"):
        run(checked)


def test_tpu_ops_fail_as_without_tpus():
    x = tf.constant([1.0, 2.0])
    summed = tf.tpu.cross_replica_sum(x)
    assert summed.shape.as_list() == [2]
    (grad,) = tf.gradients(summed, [x])
    assert grad.op.type == "CrossReplicaSum"        # TF's gradient: a sum of the gradients
    for fetch, op_type in ((tf.tpu.initialize_system(), "ConfigureDistributedTPU"),
                           (tf.tpu.shutdown_system(), "ShutdownDistributedTPU"),
                           (summed, "CrossReplicaSum")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=op_type + ": no kernel"):
            run(fetch)
    for name in ("rewrite", "replicate", "shard", "batch_parallel"):
        with pytest.raises(ValueError, match=f"tf.tpu.{name}: there are no TPU cores"):
            getattr(tf.tpu, name)(lambda: x)


def test_bfloat16_scope_keeps_float32_variables():
    with tf.tpu.bfloat16_scope():
        v = tf.get_variable("v", [2], dtype=tf.bfloat16,
                            initializer=tf.constant_initializer(1.5))
        w = tf.get_variable("w", [2], dtype=tf.float32,
                            initializer=tf.constant_initializer(2.0))
    stored = [var for var in tf.global_variables() if var.op.name == "v"]
    assert v.dtype == tf.bfloat16 and stored[0].dtype.base_dtype == tf.float32
    assert w.dtype.base_dtype == tf.float32
    np.testing.assert_allclose(run(tf.cast(v, tf.float32)), [1.5, 1.5])


def test_cross_shard_optimizer():
    w = tf.Variable([1.0, -2.0])
    loss = tf.reduce_sum(w * w)
    opt = tf.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.1))
    ((grad, var),) = opt.compute_gradients(loss, [w])
    np.testing.assert_allclose(run(grad), [2.0, -4.0])       # one shard: the plain gradient
    train = opt.apply_gradients([(grad, var)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="CrossReplicaSum"):
        run(train)


def test_xla_compile_and_jit_scope_keep_tf_conventions():
    x = tf.constant([1.0, 2.0])
    (single,) = tf.xla.experimental.compile(lambda a: a * 3.0, [x])
    pair = tf.xla.experimental.compile(lambda a: {"y": a + 1.0, "z": a * a}, [x])
    counter = tf.Variable(0.0)
    bumped = tf.xla.experimental.compile(lambda: tf.assign_add(counter, 1.0).op)
    assert bumped.type == "NoOp"
    with tf.xla.experimental.jit_scope():
        scoped = x * 5.0
    with pytest.raises(TypeError, match="compile_ops"):
        with tf.xla.experimental.jit_scope(compile_ops="yes"):
            pass
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([single, pair, scoped])
        sess.run(bumped)
        assert sess.run(counter) == 1.0
    np.testing.assert_allclose(got[0], [3.0, 6.0])
    np.testing.assert_allclose(got[1]["z"], [1.0, 4.0])
    np.testing.assert_allclose(got[2], [5.0, 10.0])


@pytest.mark.parametrize("one_shot", [False, True])
def test_saveable_iterator_resumes_where_it_was_saved(tmp_path, one_shot):
    dataset = tf.data.Dataset.range(11).shuffle(11, seed=3).batch(2)
    iterator = dataset.make_one_shot_iterator() if one_shot else \
        dataset.make_initializable_iterator()
    element = iterator.get_next()
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                         tf.data.experimental.make_saveable_from_iterator(iterator))
    saver = tf.train.Saver([tf.Variable(0)] + tf.get_collection(
        tf.GraphKeys.SAVEABLE_OBJECTS))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if not one_shot:
            sess.run(iterator.initializer)
        first = [sess.run(element).tolist() for _ in range(2)]
        path = saver.save(sess, str(tmp_path / "model"))
        rest = [sess.run(element).tolist() for _ in range(4)]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(element)
        saver.restore(sess, path)
        again = [sess.run(element).tolist() for _ in range(4)]
    assert again == rest
    flat = sorted(v for batch in first + rest for v in batch)
    assert flat == list(range(11))
    with tf.Session() as sess:    # a fresh session: nothing handed out yet
        state = sess.run(_serialize(iterator))
    assert state == (b"tensorweave-iterator-state:v1:1:0" if one_shot else
                     b"tensorweave-iterator-state:v1:0:0")


def _serialize(iterator):
    from tensorweave.ops import iterator_state_ops
    return iterator_state_ops.serialize_iterator(iterator._as_graph_element())


def test_bad_iterator_state_is_named():
    from tensorweave.ops import iterator_state_ops
    iterator = tf.data.Dataset.range(3).make_initializable_iterator()
    restore = iterator_state_ops.deserialize_iterator(
        iterator._as_graph_element(), tf.constant("garbage"),
        iterator.initializer.get_attr("dataset"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not an iterator state"):
        run(restore)

