"""tf.reduce_* on RaggedTensors (dispatched through framework/composite_tensor.py) against
NumPy over Python rows, and their gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.gradient_checker import check_gradients
from tests.ragged.reference import random_rows, splits_of

REDUCTIONS = [(tf.reduce_sum, np.sum, 0.0), (tf.reduce_mean, np.mean, np.nan),
              (tf.reduce_max, np.max, -np.inf), (tf.reduce_min, np.min, np.inf),
              (tf.reduce_prod, np.prod, 1.0)]


def run(fetches):
    with tf.Session() as session:
        return session.run(fetches)


@pytest.mark.parametrize("reducer,reference,empty", REDUCTIONS,
                         ids=[r[0].__name__ for r in REDUCTIONS])
def test_reductions_over_rows_columns_and_all(reducer, reference, empty):
    rng = np.random.default_rng(8)
    rows = random_rows(rng, 6, max_len=4)
    rows[1] = []
    rt = tf.RaggedTensor.from_row_splits(
        tf.constant([v for r in rows for v in r], tf.float64), splits_of(rows))
    every, per_row, per_column = run([reducer(rt), reducer(rt, axis=1), reducer(rt, axis=0)])
    flat = [v for r in rows for v in r]
    np.testing.assert_allclose(every, reference(flat))
    np.testing.assert_allclose(per_row, [reference(r) if r else empty for r in rows])
    width = max(len(r) for r in rows)
    columns = [[r[j] for r in rows if len(r) > j] for j in range(width)]
    np.testing.assert_allclose(per_column, [reference(c) for c in columns])
    np.testing.assert_allclose(run(reducer(rt, axis=-1)), per_row)


def test_boolean_reductions_and_inner_axes():
    flags = tf.ragged.constant([[True, False], [], [True]])
    all_rows, any_rows = run([tf.reduce_all(flags, axis=1), tf.reduce_any(flags, axis=1)])
    assert all_rows.tolist() == [False, True, True] and any_rows.tolist() == [True, False, True]
    nested = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6], []]])
    assert run(tf.reduce_sum(nested, axis=2)).to_list() == [[3, 3], [], [15, 0]]
    dense_inner = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert run(tf.reduce_max(dense_inner, axis=2)).to_list() == [[2, 4], [6]]
    with pytest.raises(ValueError, match="keepdims=True"):
        tf.reduce_sum(flags, axis=1, keepdims=True)
    with pytest.raises(ValueError, match="is not supported here"):
        tf.reduce_sum(nested, axis=1)


def test_reduction_gradients_reach_the_values():
    splits = np.array([0, 3, 3, 5])

    def fn(values):
        rt = tf.RaggedTensor.from_row_splits(values, splits)
        return [tf.reduce_sum(rt, axis=1), tf.reduce_mean(rt, axis=0),
                tf.reduce_max(rt, axis=1)[::2], tf.reduce_sum(rt * rt)]
    check_gradients(fn, [np.array([0.3, -1.2, 2.5, 0.7, 1.9])], name="ragged reductions")
