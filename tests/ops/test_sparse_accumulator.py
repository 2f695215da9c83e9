"""The sparse conditional accumulator (IndexedSlices gradients), table-driven against a NumPy
reference: each row of the result is the sum, or with MEAN the average over the gradients
that had that row; rows repeated inside one gradient add up; stale gradients are dropped;
take blocks (bounded) until enough gradients arrived. None of its ops is differentiable."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.data_flow_ops import SparseConditionalAccumulator

COVERED_OP_TYPES = {"SparseConditionalAccumulator", "SparseAccumulatorApplyGradient",
                    "SparseAccumulatorTakeGradient"}
SHORT = tf.RunOptions(timeout_in_ms=150)
BOUNDED = tf.RunOptions(timeout_in_ms=10_000)


def reference(gradients, mean):
    """(sorted indices, rows) of the accumulated [(indices, values)] gradients."""
    sums, counts = {}, {}
    for indices, values in gradients:
        for index in set(indices):
            counts[index] = counts.get(index, 0) + 1
        for index, row in zip(indices, values):
            sums[index] = sums.get(index, 0) + np.asarray(row, np.float64)
    order = sorted(sums)
    rows = [sums[i] / (counts[i] if mean else 1) for i in order]
    return np.array(order, np.int64), np.array(rows)


ROWS = [  # (name, dtype, [(indices, values)], reduction)
    ("disjoint rows", np.float32, [([0, 2], [[1, 2], [3, 4]]), ([4], [[5, 6]])], "MEAN"),
    ("shared row averaged over its gradients", np.float32,
     [([1, 3], [[1, 1], [2, 2]]), ([3], [[4, 6]]), ([3, 0], [[0, 1], [7, 7]])], "MEAN"),
    ("repeated row within a gradient adds", np.float64,
     [([2, 2, 1], [[1, 0], [2, 0], [5, 5]]), ([2], [[9, 3]])], "MEAN"),
    ("sum", np.float64, [([1, 3], [[1, 1], [2, 2]]), ([3], [[4, 6]])], "SUM"),
    ("an empty gradient counts", np.float32, [([], np.zeros((0, 2))), ([4], [[2, 2]])],
     "MEAN"),
]


@pytest.mark.parametrize("name,dtype,gradients,reduction", ROWS, ids=[r[0] for r in ROWS])
def test_take_matches_the_reference(name, dtype, gradients, reduction):
    accumulator = SparseConditionalAccumulator(tf.as_dtype(dtype), shape=[5, 2],
                                               reduction_type=reduction)
    applies = [accumulator.apply_grad(np.array(i, np.int64), np.array(v, dtype), local_step=0)
               for i, v in gradients]
    taken = accumulator.take_indexed_slices_grad(len(gradients))
    with tf.Session() as sess:
        sess.run(applies)
        assert sess.run(accumulator.num_accumulated()) == len(gradients)
        indices, values, shape = sess.run([taken.indices, taken.values, taken.dense_shape])
    want_indices, want_values = reference(gradients, reduction == "MEAN")
    np.testing.assert_array_equal(indices, want_indices)
    assert values.dtype == dtype and indices.dtype == np.int64
    np.testing.assert_allclose(values, want_values.reshape(values.shape), rtol=1e-6)
    assert list(shape) == [5, 2]


def test_stale_gradients_are_dropped_and_the_step_advances_with_each_take():
    accumulator = SparseConditionalAccumulator(tf.float32, shape=[4, 1])
    indices = tf.placeholder(tf.int64, [None])
    values = tf.placeholder(tf.float32, [None, 1])
    step = tf.placeholder(tf.int64, [])
    apply = accumulator.apply_grad(indices, values, local_step=step)
    taken = accumulator.take_grad(1)
    with tf.Session() as sess:
        sess.run(apply, {indices: [1], values: [[2.0]], step: 0})
        assert sess.run(taken)[0].tolist() == [1]
        sess.run(apply, {indices: [2], values: [[9.0]], step: 0})  # stale: global step is 1
        assert sess.run(accumulator.num_accumulated()) == 0
        sess.run(accumulator.set_global_step(7))
        sess.run(apply, {indices: [3], values: [[1.0]], step: 6})
        sess.run(apply, {indices: [0], values: [[4.0]], step: 7})
        got = sess.run(taken)
    assert got[0].tolist() == [0] and got[1].tolist() == [[4.0]]


def test_take_blocks_until_enough_gradients_arrive():
    accumulator = SparseConditionalAccumulator(tf.float64, shape=[3])
    value = tf.placeholder(tf.float64, [1])
    apply = accumulator.apply_grad(tf.constant([1], tf.int64), value)
    taken = accumulator.take_indexed_slices_grad(2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(taken.values, options=SHORT)
        workers = [threading.Thread(target=sess.run, args=(apply, {value: [v]}))
                   for v in (1.0, 3.0)]
        for worker in workers:
            worker.start()
        assert sess.run(taken.values, options=BOUNDED).tolist() == [2.0]
        for worker in workers:
            worker.join(5)


def test_an_unknown_shape_comes_from_the_gradients():
    accumulator = SparseConditionalAccumulator(tf.float32)
    grad = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([6]), tf.constant([8, 2]))
    apply = accumulator.apply_indexed_slices_grad(grad)
    taken = accumulator.take_indexed_slices_grad(1)
    with tf.Session() as sess:
        sess.run(apply)
        assert sess.run(taken.dense_shape).tolist() == [8, 2]


def test_bad_gradients_are_reported():
    accumulator = SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    with pytest.raises(ValueError, match="rows"):
        accumulator.apply_grad([0], np.zeros((1, 3), np.float32))
    indices = tf.placeholder(tf.int64, [None])
    values = tf.placeholder(tf.float32, [None, 2])
    apply = accumulator.apply_grad(indices, values)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            sess.run(apply, {indices: [4], values: [[1.0, 1.0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="one entry per row"):
            sess.run(apply, {indices: [0, 1], values: [[1.0, 1.0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_required"):
            sess.run(accumulator.take_grad(0))
    with pytest.raises(ValueError, match="reduction_type"):
        SparseConditionalAccumulator(tf.float32, reduction_type="MAX")
