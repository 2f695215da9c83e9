"""tf.data.Options (typed settings, merge rules, what is honoured) and cardinality /
assert_cardinality, against TF's documented rules and hand-computed counts."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tests.data.reading import read_all

exp = tf.data.experimental


def _run(tensor, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(tensor, feed_dict)


# --- Options ------------------------------------------------------------------------------------
def test_options_defaults_nested_groups_and_aliases():
    options = tf.data.Options()
    assert options.deterministic is None and options.experimental_slack is None
    options.experimental_deterministic = False
    assert options.deterministic is False  # alias of the same setting
    options.threading.private_threadpool_size = 3
    assert options.experimental_threading.private_threadpool_size == 3
    assert isinstance(options.experimental_optimization, exp.OptimizationOptions)
    options.experimental_optimization.map_vectorization.enabled = True
    options.experimental_distribute.auto_shard_policy = exp.AutoShardPolicy.DATA
    options.experimental_external_state_policy = exp.ExternalStatePolicy.IGNORE
    options.autotune.autotune_algorithm = exp.AutotuneAlgorithm.HILL_CLIMB
    assert options.experimental_distribute.auto_shard_policy == 2
    assert int(exp.AutoShardPolicy.OFF) == -1 and exp.AutoShardPolicy.HINT == 3
    assert exp.ExternalStatePolicy.FAIL.value == 2


@pytest.mark.parametrize("target,name,value,error", [
    ("options", "no_such_option", 1, AttributeError),
    ("options", "deterministic", 1, TypeError),
    ("threading", "private_threadpool_size", 2.5, TypeError),
    ("threading", "private_threadpool_size", True, TypeError),
    ("distribute", "auto_shard_policy", 7, TypeError),
])
def test_options_reject_unknown_names_and_wrong_types(target, name, value, error):
    options = tf.data.Options()
    obj = {"options": options, "threading": options.threading,
           "distribute": options.experimental_distribute}[target]
    with pytest.raises(error, match=name):
        setattr(obj, name, value)


def test_options_merge_later_wins_and_unset_keeps():
    first, second = tf.data.Options(), tf.data.Options()
    first.deterministic = True
    first.threading.max_intra_op_parallelism = 1
    second.deterministic = False
    second.experimental_slack = True
    merged = first.merge(second)
    assert merged.deterministic is False and merged.experimental_slack is True
    assert merged.threading.max_intra_op_parallelism == 1
    assert first.deterministic is True  # merge returns a new object
    assert tf.data.Options() == tf.data.Options() and merged != first
    with pytest.raises(AttributeError, match="Cannot get the property 'experimental_nope'"):
        tf.data.Options().experimental_nope  # noqa: B018 - reading it is the test


def test_with_options_travels_through_transformations_and_zip():
    a, b = tf.data.Options(), tf.data.Options()
    a.experimental_slack = True
    b.threading.private_threadpool_size = 2
    left = tf.data.Dataset.range(4).with_options(a).map(lambda x: x * 2)
    right = tf.data.Dataset.range(4).with_options(b)
    zipped = tf.data.Dataset.zip((left, right)).batch(2)
    options = zipped.options()
    assert options.experimental_slack is True
    assert options.threading.private_threadpool_size == 2
    assert tf.data.Dataset.range(3).options() == tf.data.Options()
    with pytest.raises(TypeError, match="with_options"):
        tf.data.Dataset.range(3).with_options({"deterministic": False})
    assert list(zipped.as_numpy_iterator())[0][0].tolist() == [0, 2]


def _slow_first(x):
    """Element 0 takes far longer than the others (NumPy mode: runs on concrete values)."""
    value = int(np.asarray(x))
    time.sleep(0.3 if value == 0 else 0.001)
    return np.int64(value)


def test_deterministic_false_lets_parallel_map_reorder():
    """Chunks of 16 elements go to the pool; with deterministic False the slow first chunk no
    longer holds back the next ones."""
    dataset = tf.data.Dataset.range(64).map(_slow_first, num_parallel_calls=4)
    assert list(dataset.as_numpy_iterator()) == list(range(64))
    options = tf.data.Options()
    options.experimental_deterministic = False
    unordered = list(dataset.with_options(options).as_numpy_iterator())
    assert sorted(unordered) == list(range(64)) and unordered != list(range(64))
    assert unordered[-1] == 15  # the chunk holding element 0 finishes last
    # The map's own argument overrides the options (True keeps the order).
    kept = tf.data.Dataset.range(64).map(_slow_first, num_parallel_calls=4, deterministic=True)
    assert list(kept.with_options(options).as_numpy_iterator()) == list(range(64))
    with pytest.raises(TypeError, match="deterministic"):
        tf.data.Dataset.range(3).map(lambda x: x, deterministic="no")


def test_private_threadpool_size_caps_parallel_calls():
    running, peak, lock = [0], [0], threading.Lock()

    def tracked(x):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return np.asarray(x) + 0

    dataset = tf.data.Dataset.range(64).map(tracked, num_parallel_calls=4)
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    assert list(dataset.with_options(options).as_numpy_iterator()) == list(range(64))
    assert peak[0] == 1
    peak[0] = 0
    assert list(dataset.as_numpy_iterator()) == list(range(64))
    assert peak[0] > 1


# --- cardinality ----------------------------------------------------------------------------------
def _card(dataset):
    with tf.Graph().as_default():
        return int(_run(dataset.cardinality()))


R = tf.data.Dataset.range
CASES = [
    (lambda: R(10), 10),
    (lambda: R(2, 11, 3), 3),
    (lambda: tf.data.Dataset.from_tensor_slices(np.zeros((7, 2))), 7),
    (lambda: tf.data.Dataset.from_tensors([1, 2, 3]), 1),
    (lambda: R(10).batch(3), 4),
    (lambda: R(10).batch(3, drop_remainder=True), 3),
    (lambda: R(10).padded_batch(4, padded_shapes=[]), 3),
    (lambda: R(10).take(4), 4),
    (lambda: R(3).take(-1), 3),
    (lambda: R(10).skip(4), 6),
    (lambda: R(3).skip(5), 0),
    (lambda: R(10).skip(-1), 0),
    (lambda: R(10).shard(3, 0), 4),
    (lambda: R(10).shard(3, 2), 3),
    (lambda: R(5).repeat(3), 15),
    (lambda: R(5).repeat(), exp.INFINITE_CARDINALITY),
    (lambda: R(0).repeat(), 0),
    (lambda: R(5).repeat().take(7), 7),
    (lambda: R(5).repeat().skip(7), exp.INFINITE_CARDINALITY),
    (lambda: R(5).map(lambda x: x + 1).shuffle(3).prefetch(2).cache(), 5),
    (lambda: R(5).filter(lambda x: x > 2), exp.UNKNOWN_CARDINALITY),
    (lambda: R(5).filter(lambda x: x > 2).take(2), exp.UNKNOWN_CARDINALITY),
    (lambda: R(5).filter(lambda x: x > 2).repeat(), exp.INFINITE_CARDINALITY),  # TF too
    (lambda: tf.data.Dataset.zip((R(5), R(3))), 3),
    (lambda: tf.data.Dataset.zip((R(5), R(3).repeat())), 5),
    (lambda: tf.data.Dataset.zip((R(5), R(3).filter(lambda x: x > 0))), -2),
    (lambda: R(5).concatenate(R(4)), 9),
    (lambda: R(5).concatenate(R(4).repeat()), -1),
    (lambda: exp.Counter(), -1),
    (lambda: R(5).enumerate(), 5),
    (lambda: R(5).apply(exp.assert_cardinality(5)), 5),
]


@pytest.mark.parametrize("build,expected", CASES)
def test_cardinality_matches_tf_rules(build, expected):
    assert _card(build()) == expected


def test_cardinality_matches_count_of_finite_pipelines():
    for build, expected in CASES:
        if expected >= 0:
            assert len(list(build().as_numpy_iterator())) == expected


def test_cardinality_of_fed_parameters_is_computed_in_the_session():
    with tf.Graph().as_default():
        count = tf.placeholder(tf.int64, [])
        dataset = tf.data.Dataset.range(count).batch(4)
        card = exp.cardinality(dataset)
        assert int(_run(card, {count: 10})) == 3
        assert int(_run(card, {count: 3})) == 1


def test_assert_cardinality_passes_and_fails_naming_both_counts():
    with tf.Graph().as_default():
        good = R(4).apply(exp.assert_cardinality(4))
        assert [int(v) for v in read_all(good)] == [0, 1, 2, 3]
        with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 5 "
                           "elements but contained only 4"):
            read_all(R(4).apply(exp.assert_cardinality(5)))
        with pytest.raises(tf.errors.FailedPreconditionError, match="at least 4"):
            read_all(R(4).apply(exp.assert_cardinality(3)))
    with pytest.raises(ValueError, match="expected_cardinality"):
        R(4).apply(exp.assert_cardinality(-5))
    with pytest.raises(TypeError, match="cardinality"):
        exp.cardinality([1, 2])


def test_unordered_parallel_map_surfaces_errors_and_ends():
    def fragile(x):
        value = int(np.asarray(x))
        if value == 40:
            raise ValueError("element 40 is bad")
        return np.int64(value)

    options = tf.data.Options()
    options.deterministic = False
    dataset = tf.data.Dataset.range(64).map(fragile, num_parallel_calls=3).with_options(options)
    with pytest.raises(ValueError, match="element 40 is bad"):
        list(dataset.as_numpy_iterator())
    kept = list(dataset.apply(exp.ignore_errors()).as_numpy_iterator())
    assert sorted(kept) == [v for v in range(64) if v != 40]
