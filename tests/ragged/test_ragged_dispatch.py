"""tf.concat / tf.stack / tf.gather and the elementwise tf.strings ops on RaggedTensors
(dispatched through framework/composite_tensor.py), against Python lists."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.gradient_checker import check_gradients

A = [[1, 2], [], [3]]
B = [[4], [5, 6], []]


def run(fetches):
    with tf.Session() as session:
        return session.run(fetches)


def test_concat_along_rows_and_inside_rows():
    a, b = tf.ragged.constant(A), tf.ragged.constant(B)
    rows, inside, last = run([tf.concat([a, b], 0), tf.concat([a, b], 1), tf.concat([a, b], -1)])
    assert rows.to_list() == A + B
    assert inside.to_list() == [x + y for x, y in zip(A, B)] == last.to_list()
    mixed = run(tf.concat([a, tf.constant([[7, 8]])], 0))
    assert mixed.to_list() == A + [[7, 8]]
    three = run(tf.concat([a, b, a], 1)).to_list()
    assert three == [x + y + z for x, y, z in zip(A, B, A)]
    with pytest.raises(ValueError, match="numbers of rows differ"):
        tf.concat([a, tf.ragged.constant([[1]])], 1)
    fed = tf.ragged.placeholder(tf.int32, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="numbers of rows differ"):
        with tf.Session() as session:
            session.run(tf.concat([a, fed], 1), {fed: tf.ragged.constant_value([[1]])})
    with pytest.raises(ValueError, match="axis 2 is not supported"):
        tf.concat([tf.ragged.constant([[[1]]]), tf.ragged.constant([[[2]]])], 2)


def test_gather_and_stack_rows():
    a = tf.ragged.constant(A)
    assert run(tf.gather(a, [2, 0, 0, 1])).to_list() == [A[2], A[0], A[0], A[1]]
    assert run(tf.stack([a, tf.ragged.constant(B)])).to_list() == [A, B]
    with pytest.raises(ValueError, match="only axis=0"):
        tf.gather(a, [0], axis=1)
    assert run(tf.concat([tf.constant([1]), tf.constant([2])], 0)).tolist() == [1, 2]


def test_concat_and_gather_gradients():
    def fn(x, y):
        a = tf.RaggedTensor.from_row_splits(x, [0, 2, 2, 3])
        b = tf.RaggedTensor.from_row_splits(y, [0, 1, 3, 3])
        joined = tf.concat([a, b], 1)
        return [tf.gather(joined, [2, 0]).to_tensor(), tf.concat([a, b], 0).flat_values * 2.0]
    rng = np.random.default_rng(1)
    check_gradients(fn, [rng.standard_normal(3), rng.standard_normal(3)], name="ragged concat")


def test_string_ops_map_ragged_values():
    words = tf.strings.split(["hello world", "a bb ccc", ""], result_type="RaggedTensor")
    texts = [["hello", "world"], ["a", "bb", "ccc"], []]
    got = run({"len": tf.strings.length(words), "up": tf.strings.upper(words),
               "sub": tf.strings.substr(words, 0, 2),
               "re": tf.strings.regex_replace(words, "l+", "L"),
               "hash": tf.strings.to_hash_bucket_fast(words, 7),
               "plain": tf.strings.to_hash_bucket_fast([w for r in texts for w in r], 7)})
    assert got["len"].to_list() == [[len(w) for w in r] for r in texts]
    assert got["up"].to_list() == [[w.upper().encode() for w in r] for r in texts]
    assert got["sub"].to_list() == [[w[:2].encode() for w in r] for r in texts]
    assert got["re"].to_list() == [[w.replace("ll", "L").replace("l", "L").encode() for w in r]
                                   for r in texts]
    assert got["hash"].flat_values.tolist() == got["plain"].tolist()
    numbers = run(tf.strings.to_number(tf.ragged.constant([["1.5"], [], ["2"]])))
    assert numbers.to_list() == [[1.5], [], [2.0]]
