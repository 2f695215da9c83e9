"""tf.TensorArray (TF 1.x API) against NumPy: every method, outside and inside tf.while_loop,
dynamic size, element shape inference, errors naming the method, and numeric gradients (float64)
through every op, in and out of loops. Also ReverseSequence and StatelessRandomUniform."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.stateless_random_ops import stateless_random_uniform
from tensorweave.testing import gradient_checker

COVERED_OP_TYPES = {"TensorArrayCreate", "TensorArrayWrite", "TensorArrayWriteGrad",
                    "TensorArrayRead", "TensorArrayReadGrad", "TensorArrayGather",
                    "TensorArrayGatherGrad", "TensorArrayScatter", "TensorArrayScatterGrad",
                    "TensorArrayStack", "TensorArraySplit", "ReverseSequence",
                    "StatelessRandomUniform"}
RNG = np.random.default_rng(14)


def _run(fetches, feed=None):
    with tf.Session() as session:
        return session.run(fetches, feed)


def test_write_read_stack_size_outside_a_loop():
    with tf.Graph().as_default():
        a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
        ta = tf.TensorArray(tf.float64, size=3)
        ta = ta.write(0, a).write(2, b)
        assert ta.element_shape.as_list() == [2, 3]
        stacked, first, size = _run([ta.stack(), ta.read(0), ta.size()])
        np.testing.assert_array_equal(stacked, np.stack([a, np.zeros((2, 3)), b]))
        np.testing.assert_array_equal(first, a)
        assert size == 3
        assert ta.stack().dtype == tf.float64 and ta.read(2).shape.as_list() == [2, 3]


def test_unstack_gather_scatter_concat_split():
    values = RNG.normal(size=(4, 2, 3))
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float64, size=4).unstack(values)
        gathered = ta.gather([3, 1, 1])
        scattered = tf.TensorArray(tf.float64, size=4).scatter([2, 0], values[:2]).stack()
        concat = ta.concat()
        split = tf.TensorArray(tf.float64, size=3).split(np.arange(12.0).reshape(6, 2),
                                                         [2, 2, 2])
        got = _run([gathered, scattered, concat, split.read(1), split.size()])
    np.testing.assert_array_equal(got[0], values[[3, 1, 1]])
    np.testing.assert_array_equal(got[1], np.stack([values[1], np.zeros((2, 3)), values[0],
                                                    np.zeros((2, 3))]))
    np.testing.assert_array_equal(got[2], values.reshape(8, 3))
    np.testing.assert_array_equal(got[3], [[4.0, 5.0], [6.0, 7.0]])
    assert got[4] == 3


def test_dynamic_size_grows_and_unwritten_elements_are_zero():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[2])
        empty = ta.stack()
        grown = ta.write(4, [1, 2]).write(1, [3, 4])
        got = _run([empty, grown.stack(), grown.size()])
    assert got[0].shape == (0, 2)
    np.testing.assert_array_equal(got[1], [[0, 0], [3, 4], [0, 0], [0, 0], [1, 2]])
    assert got[2] == 5


def test_a_fixed_size_array_refuses_a_write_past_its_end():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=2).write(2, [1.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="write.*index 2.*size is 2"):
            _run(ta.stack())


def test_inconsistent_element_shapes_fail_at_build_time():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0])
        with pytest.raises(ValueError, match="TensorArray"):
            ta.write(1, [1.0, 2.0, 3.0])
        with pytest.raises(TypeError, match="TensorArray.write.*int32"):
            ta.write(1, tf.constant([1, 2]))


def test_unequal_split_lengths_are_refused_naming_the_limitation():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=2).split(tf.zeros([5]), [2, 3])
        with pytest.raises(tf.errors.UnimplementedError, match="split.*same length"):
            _run(ta.stack())


def test_stack_of_nothing_written_needs_a_known_element_shape():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=2, element_shape=[None, 3])
        with pytest.raises(tf.errors.InvalidArgumentError, match="element_shape"):
            _run(ta.stack())
        assert _run(tf.TensorArray(tf.float32, size=2, element_shape=[3]).stack()).shape == \
            (2, 3)


def test_arrays_as_while_loop_variables_infer_their_element_shape():
    x = RNG.normal(size=(5, 3))
    with tf.Graph().as_default():
        inputs = tf.TensorArray(tf.float64, size=5).unstack(x)
        outputs = tf.TensorArray(tf.float64, size=5)

        def body(t, outputs, total):
            total = total + inputs.read(t)
            return t + 1, outputs.write(t, total * 2.0), total

        _, outputs, _ = tf.while_loop(lambda t, *_: t < 5, body,
                                      [0, outputs, tf.zeros([3], tf.float64)])
        assert isinstance(outputs, tf.TensorArray)
        assert outputs.element_shape.as_list() == [3]
        got = _run(outputs.stack())
    np.testing.assert_allclose(got, 2 * np.cumsum(x, 0))


def test_dynamic_array_growing_in_a_data_dependent_loop():
    with tf.Graph().as_default():
        limit = tf.placeholder(tf.int32, [])
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        _, ta = tf.while_loop(lambda i, ta: i < limit,
                              lambda i, ta: (i + 1, ta.write(i, i * i)), [0, ta])
        with tf.Session() as session:
            np.testing.assert_array_equal(session.run(ta.stack(), {limit: 4}), [0, 1, 4, 9])
            assert session.run(ta.size(), {limit: 7}) == 7


def _check(fn, inputs):
    gradient_checker.check_gradients(fn, inputs)


def test_gradients_of_write_read_and_stack():
    def fn(a, b):
        ta = tf.TensorArray(tf.float64, size=3).write(0, a).write(1, b * a)
        return [ta.stack(), ta.read(1) * 3.0]
    _check(fn, [RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))])


def test_a_second_write_to_an_index_replaces_it_in_values_and_gradients():
    def fn(a, b):
        ta = tf.TensorArray(tf.float64, size=2).write(0, a).write(0, b)
        return ta.stack()
    _check(fn, [RNG.normal(size=(3,)), RNG.normal(size=(3,))])


def test_gradients_of_unstack_gather_scatter_concat_split():
    def fn(x, y):
        ta = tf.TensorArray(tf.float64, size=4).unstack(x)
        other = tf.TensorArray(tf.float64, size=4).scatter([3, 1], y)
        pieces = tf.TensorArray(tf.float64, size=2).split(tf.reshape(x, [8, 3]), [4, 4])
        return [ta.gather([0, 2, 2]), other.stack() * 2.0, ta.concat(), pieces.read(1)]
    _check(fn, [RNG.normal(size=(4, 2, 3)), RNG.normal(size=(2, 2, 3))])


def test_gradients_through_arrays_inside_a_while_loop():
    def fn(x, w):
        inputs = tf.TensorArray(tf.float64, size=4).unstack(x)
        outputs = tf.TensorArray(tf.float64, size=4)

        def body(t, outputs, h):
            h = tf.tanh(tf.matmul(inputs.read(t), w) + h)
            return t + 1, outputs.write(t, h), h

        _, outputs, h = tf.while_loop(lambda t, *_: t < 4, body,
                                      [0, outputs, tf.zeros([2, 3], tf.float64)])
        return [outputs.stack(), outputs.gather([1, 3]), h]
    _check(fn, [RNG.normal(size=(4, 2, 3)), RNG.normal(size=(3, 3)) * 0.5])


def test_gradients_through_scatter_and_gather_of_a_loop_variable_array():
    def fn(x):
        ta = tf.TensorArray(tf.float64, size=6)

        def body(t, ta):
            block = tf.stack([x[t], x[t] * x[t]])
            return t + 1, ta.scatter(tf.stack([2 * t, 2 * t + 1]), block)

        _, ta = tf.while_loop(lambda t, _: t < 3, body, [0, ta])
        return ta.gather([5, 0, 3])
    _check(fn, [RNG.normal(size=(3, 2))])


def test_second_derivatives_through_an_array_are_refused_naming_it():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        y = tf.TensorArray(tf.float64, size=2).write(1, x * x).read(1)
        grad = tf.gradients(tf.reduce_sum(y), x)[0]
        with pytest.raises(NotImplementedError, match="Second derivatives through a Tensor"):
            tf.gradients(tf.reduce_sum(grad * grad), x)


def _np_reverse_sequence(x, lengths, seq_axis, batch_axis):
    out = x.copy()
    for b, length in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch_axis] = b
        index[seq_axis] = slice(0, length)
        source = list(index)
        source[seq_axis] = slice(length - 1, None, -1) if length else slice(0, 0)
        out[tuple(index)] = x[tuple(source)]
    return out


@pytest.mark.parametrize("seq_axis,batch_axis", [(1, 0), (0, 1), (2, 1)])
def test_reverse_sequence_against_numpy_with_gradient(seq_axis, batch_axis):
    x = RNG.normal(size=(4, 3, 4, 2)) if seq_axis != 0 else RNG.normal(size=(4, 3, 2))
    if (seq_axis, batch_axis) == (2, 1):
        x = RNG.normal(size=(2, 3, 4))
    batch = x.shape[batch_axis]
    lengths = RNG.integers(0, x.shape[seq_axis] + 1, size=batch)
    with tf.Graph().as_default():
        got = _run(tf.reverse_sequence(x, lengths, seq_axis=seq_axis, batch_axis=batch_axis))
    np.testing.assert_array_equal(got, _np_reverse_sequence(x, lengths, seq_axis, batch_axis))
    _check(lambda v: tf.reverse_sequence(v, lengths.astype(np.int64), seq_axis, batch_axis),
           [x])


def test_reverse_sequence_errors_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="reverse_sequence.*3 seq_lengths for a batch of 2"):
            tf.reverse_sequence(tf.zeros([2, 4]), [1, 2, 3], seq_axis=1, batch_axis=0)
        bad = tf.reverse_sequence(tf.zeros([2, 4]), tf.constant([1, 5]), seq_axis=1)
        with pytest.raises(tf.errors.InvalidArgumentError, match="ReverseSequence"):
            _run(bad)


def test_stateless_uniform_depends_only_on_the_seed():
    with tf.Graph().as_default():
        seed = tf.placeholder(tf.int64, [2])
        draw = stateless_random_uniform([3, 4], seed, dtype=tf.float64)
        draw32 = stateless_random_uniform([5], seed)
        with tf.Session() as session:
            a = session.run(draw, {seed: [1, 2]})
            b = session.run(draw, {seed: [1, 2]})
            c = session.run(draw, {seed: [1, 3]})
            d = session.run(draw32, {seed: [1, 2]})
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.dtype == np.float64 and d.dtype == np.float32 and a.shape == (3, 4)
    assert 0.0 <= a.min() and a.max() < 1.0


def test_a_cond_returns_arrays_and_their_gradients_flow():
    def fn(x):
        ta = tf.TensorArray(tf.float64, size=2).write(0, x)
        chosen = tf.cond(tf.reduce_sum(x) > 0.0, lambda: ta.write(1, x * 2.0),
                         lambda: ta.write(1, x * -3.0))
        assert isinstance(chosen, tf.TensorArray)
        return chosen.stack()
    for sign in (1.0, -1.0):
        x = np.abs(RNG.normal(size=(3,))) * sign
        with tf.Graph().as_default():
            got = _run(fn(tf.constant(x)))
        np.testing.assert_allclose(got, [x, x * (2.0 if sign > 0 else -3.0)])
        _check(fn, [x])


def test_random_stateless_uniform_range_and_errors():
    with tf.Graph().as_default():
        draw = tf.random.stateless_uniform([1000], seed=[3, 4], minval=-2.0, maxval=3.0,
                                           dtype=tf.float64)
        got, again = _run([draw, draw])
        np.testing.assert_array_equal(got, again)
        assert -2.0 <= got.min() and got.max() < 3.0 and got.std() > 1.0
        with pytest.raises(ValueError, match="stateless_uniform of int32 needs maxval"):
            tf.random.stateless_uniform([2], seed=[1, 2], dtype=tf.int32)
        with pytest.raises(ValueError, match="stateless_uniform: dtype string"):
            tf.random.stateless_uniform([2], seed=[1, 2], dtype=tf.string)
