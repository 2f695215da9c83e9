"""Random ops: seeding (graph seed + op seed), fresh numbers on every run, dtypes and shapes,
and sample moments / bounds within statistical tolerance.

A row: how to build the sampler for a shape, dtype and seed, its dtypes, and a check of a large
sample against the distribution (means and standard deviations within ~5 standard errors)."""
from dataclasses import dataclass

import numpy as np
import pytest

import tensorweave as tf

N = 20000  # sample size for the moment checks: standard error of a mean ~ 0.007 sigma


@dataclass
class RandomCase:
    name: str
    op_types: frozenset
    build: object         # fn(shape, dtype, seed) -> Tensor
    dtypes: tuple
    check_sample: object  # fn(sample as float64) -> None, asserting the distribution


def _close(value, expected, scale, name):
    assert abs(value - expected) < 5 * scale / np.sqrt(N), f"{name}: {value} vs {expected}"


def _normal_check(mean, stddev):
    def check(sample):
        _close(sample.mean(), mean, stddev, "mean")
        _close(sample.std(), stddev, stddev, "stddev")
    return check


def _uniform_check(low, high):
    def check(sample):
        # The kernel samples [0, 1); scaling to [low, high) may round up to high (float16).
        assert sample.min() >= low
        assert sample.max() < high if (low, high) == (0.0, 1.0) else sample.max() <= high
        _close(sample.mean(), (low + high) / 2, (high - low), "mean")
        _close(sample.std(), (high - low) / np.sqrt(12), (high - low), "stddev")
    return check


# A standard normal truncated to [-2, 2] has standard deviation sqrt(1 - 4 phi(2) / erf(2/sqrt2)).
TRUNCATED_STD = np.sqrt(1 - 4 * np.exp(-2) / np.sqrt(2 * np.pi) / 0.9544997361036416)


def _truncated_check(mean, stddev):
    def check(sample):
        # The bound holds exactly (up to the dtype's rounding of mean + 2 * stddev).
        assert np.all(np.abs(sample - mean) <= 2 * stddev * (1 + 1e-3))
        _close(sample.mean(), mean, stddev, "mean")
        _close(sample.std(), TRUNCATED_STD * stddev, stddev, "stddev")
    return check


def _int_uniform_check(low, high):
    def check(sample):
        assert sample.min() == low and sample.max() == high - 1
        assert np.all(sample == np.round(sample))
        counts = np.bincount((sample - low).astype(np.int64), minlength=high - low)
        expected = N / (high - low)
        assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))
    return check


def _shuffle_check(sample):
    np.testing.assert_array_equal(np.sort(sample), np.arange(N))
    assert not np.array_equal(sample, np.arange(N))


FLOAT_DTYPES = (tf.float16, tf.float32, tf.float64)
CASES = [
    RandomCase("normal_standard", {"RandomStandardNormal"},
               lambda shape, dtype, seed: tf.random_normal(shape, dtype=dtype, seed=seed),
               FLOAT_DTYPES, _normal_check(0.0, 1.0)),
    RandomCase("normal_scaled", {"RandomStandardNormal", "Mul", "Add"},
               lambda shape, dtype, seed: tf.random_normal(shape, mean=3.0, stddev=0.5,
                                                           dtype=dtype, seed=seed),
               FLOAT_DTYPES, _normal_check(3.0, 0.5)),
    RandomCase("uniform_unit", {"RandomUniform"},
               lambda shape, dtype, seed: tf.random_uniform(shape, dtype=dtype, seed=seed),
               FLOAT_DTYPES, _uniform_check(0.0, 1.0)),
    RandomCase("uniform_range", {"RandomUniform", "Mul", "Add", "Sub"},
               lambda shape, dtype, seed: tf.random_uniform(shape, -2.0, 6.0, dtype=dtype,
                                                            seed=seed),
               FLOAT_DTYPES, _uniform_check(-2.0, 6.0)),
    RandomCase("truncated_normal", {"TruncatedNormal"},
               lambda shape, dtype, seed: tf.truncated_normal(shape, dtype=dtype, seed=seed),
               FLOAT_DTYPES, _truncated_check(0.0, 1.0)),
    RandomCase("truncated_normal_scaled", {"TruncatedNormal", "Mul", "Add"},
               lambda shape, dtype, seed: tf.truncated_normal(shape, mean=-1.0, stddev=2.0,
                                                              dtype=dtype, seed=seed),
               FLOAT_DTYPES, _truncated_check(-1.0, 2.0)),
    RandomCase("uniform_int", {"RandomUniformInt"},
               lambda shape, dtype, seed: tf.random_uniform(shape, -3, 5, dtype=dtype,
                                                            seed=seed),
               (tf.int32, tf.int64), _int_uniform_check(-3, 5)),
    RandomCase("shuffle", {"RandomShuffle"},
               lambda shape, dtype, seed: tf.random_shuffle(
                   tf.range(int(np.prod(shape)), dtype=dtype), seed=seed),
               (tf.int32, tf.int64, tf.float32, tf.float64), _shuffle_check),
]
COVERED_OP_TYPES = set().union(*(case.op_types for case in CASES))


def _params():
    return [pytest.param(case, dtype, id=f"{case.name}-{dtype.name}")
            for case in CASES for dtype in case.dtypes]


def _sample(case, dtype, shape, graph_seed=None, op_seed=None, runs=1):
    with tf.Graph().as_default() as graph:
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        tensor = case.build(shape, dtype, op_seed)
        present = {op.type for op in graph.get_operations()}
        assert case.op_types <= present, f"{case.name}: graph lacks {case.op_types - present}"
        with tf.Session() as session:
            values = [session.run(tensor) for _ in range(runs)]
    return tensor, values


@pytest.mark.parametrize("case,dtype", _params())
def test_dtype_shape_and_distribution(case, dtype):
    shape = [N // 100, 100] if case.name != "shuffle" else [N]
    tensor, (value,) = _sample(case, dtype, shape, graph_seed=1, op_seed=2)
    assert tensor.dtype == dtype
    assert tensor.shape.as_list() == shape
    assert value.dtype == dtype.np_dtype
    assert list(value.shape) == shape
    case.check_sample(value.astype(np.float64).reshape(-1))


@pytest.mark.parametrize("case,dtype", _params())
def test_graph_seed_and_op_seed_give_the_same_numbers(case, dtype):
    _, first = _sample(case, dtype, [5, 4], graph_seed=11, op_seed=7, runs=2)
    _, second = _sample(case, dtype, [5, 4], graph_seed=11, op_seed=7, runs=2)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    _, other_op_seed = _sample(case, dtype, [5, 4], graph_seed=11, op_seed=8)
    _, other_graph_seed = _sample(case, dtype, [5, 4], graph_seed=12, op_seed=7)
    assert not np.array_equal(first[0], other_op_seed[0])
    assert not np.array_equal(first[0], other_graph_seed[0])


@pytest.mark.parametrize("case,dtype", _params())
def test_every_run_draws_fresh_numbers(case, dtype):
    _, (first, second) = _sample(case, dtype, [5, 4], graph_seed=3, op_seed=4, runs=2)
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_graph_seed_alone_makes_a_program_deterministic(case):
    dtype = case.dtypes[-1]
    _, first = _sample(case, dtype, [6], graph_seed=5, runs=2)
    _, second = _sample(case, dtype, [6], graph_seed=5, runs=2)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_op_seed_alone_is_deterministic_and_no_seed_is_not(case):
    dtype = case.dtypes[-1]
    _, first = _sample(case, dtype, [50], op_seed=9)
    _, second = _sample(case, dtype, [50], op_seed=9)
    np.testing.assert_array_equal(first[0], second[0])
    _, unseeded_a = _sample(case, dtype, [50])
    _, unseeded_b = _sample(case, dtype, [50])
    assert not np.array_equal(unseeded_a[0], unseeded_b[0])


def test_two_ops_with_a_graph_seed_differ_from_each_other():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        a, b = tf.random_normal([10]), tf.random_normal([10])
        with tf.Session() as session:
            value_a, value_b = session.run([a, b])
    assert not np.array_equal(value_a, value_b)


def test_a_new_session_restarts_the_sequence_of_a_seeded_op():
    with tf.Graph().as_default():
        sample = tf.random_uniform([4], seed=3)
        with tf.Session() as first:
            first_values = [first.run(sample) for _ in range(2)]
        with tf.Session() as second:
            second_values = [second.run(sample) for _ in range(2)]
    for a, b in zip(first_values, second_values):
        np.testing.assert_array_equal(a, b)


def test_shape_from_a_tensor():
    with tf.Graph().as_default():
        dims = tf.placeholder(tf.int32, [2])
        sample = tf.random_normal(dims, seed=1)
        assert sample.shape.is_compatible_with([3, 5]) and sample.shape.ndims == 2
        with tf.Session() as session:
            assert session.run(sample, {dims: [3, 5]}).shape == (3, 5)


def test_shuffle_permutes_rows_only():
    value = np.arange(12).reshape(6, 2)
    with tf.Graph().as_default():
        shuffled = tf.random_shuffle(tf.constant(value), seed=4)
        assert shuffled.shape.as_list() == [6, 2]
        with tf.Session() as session:
            got = session.run(shuffled)
    assert sorted(map(tuple, got)) == sorted(map(tuple, value))
    assert not np.array_equal(got, value)


def test_random_ops_are_stateful_and_have_no_gradient():
    with tf.Graph().as_default():
        sample = tf.random_normal([3])
        random_ops = [op for op in tf.get_default_graph().get_operations()
                      if op.type == "RandomStandardNormal"]
        assert random_ops and all(op.op_def.is_stateful for op in random_ops)
        assert tf.gradients(tf.reduce_sum(tf.random_normal(tf.shape(sample))), sample) == [None]


# --- bad inputs ---------------------------------------------------------------------------------
def test_integer_dtype_for_float_sampler_names_the_op():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="RandomStandardNormal"):
            tf.random_normal([2], dtype=tf.int32)


def test_uniform_int_needs_maxval_and_a_nonempty_range():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="maxval"):
            tf.random_uniform([2], dtype=tf.int32)
        empty = tf.random_uniform([2], 5, 5, dtype=tf.int64, name="empty_range")
        with tf.Session() as session:
            with pytest.raises(tf.errors.InvalidArgumentError, match="empty_range"):
                session.run(empty)
