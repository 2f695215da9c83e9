"""tf.ragged ops: indexing, elementwise dispatch, constant, range, masks, partitions, fill,
Session feeds/fetches, specs and gradients; each against a Python/NumPy reference."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.gradient_checker import check_gradients
from tests.ragged.reference import flat_of, random_rows, splits_of

ROWS = [[1, 2, 3], [], [4], [5, 6, 7, 8]]
NESTED = [[[1, 2], [3]], [], [[4, 5, 6], [], [7]]]


def run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


def as_list(value):
    return value.to_list() if hasattr(value, "to_list") else value.tolist()


GETITEM = [
    (ROWS, 0), (ROWS, -1), (ROWS, 2), (ROWS, slice(1, 3)), (ROWS, slice(None, -1)),
    (ROWS, slice(5, 9)), (ROWS, slice(None, None, 2)), (ROWS, slice(None, None, -1)),
    (ROWS, (3, 1)), (ROWS, (3, slice(1, None))), (ROWS, (slice(None), slice(0, 2))),
    (ROWS, (slice(None), slice(-2, None))), (ROWS, (slice(1, None), slice(1, -1))),
    (NESTED, 0), (NESTED, (2, 0)), (NESTED, (2, 0, 1)), (NESTED, (slice(None), slice(0, 1))),
    (NESTED, (slice(None), slice(None), slice(0, 1))), (NESTED, (0, slice(None), 0)),
]


def _python_getitem(nested, key):
    key = key if isinstance(key, tuple) else (key,)
    if not key:
        return nested
    first, rest = key[0], key[1:]
    if isinstance(first, slice):
        return [_python_getitem(row, rest) for row in nested[first]]
    return _python_getitem(nested[first], rest)


@pytest.mark.parametrize("nested,key", GETITEM, ids=[str(k) for _, k in GETITEM])
def test_getitem_matches_python_indexing(nested, key):
    assert as_list(run(tf.ragged.constant(nested)[key])) == _python_getitem(nested, key)


def test_getitem_column_of_every_row():
    rt = tf.ragged.constant([[1, 2], [3, 4, 5], [6]])
    np.testing.assert_array_equal(run(rt[:, 0]), [1, 3, 6])
    np.testing.assert_array_equal(run(rt[:, -1]), [2, 5, 6])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range of some row"):
        run(rt[:, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="row index out of range"):
        run(rt[3])
    with pytest.raises(ValueError, match="Ellipsis and tf.newaxis"):
        rt[..., 0]
    with pytest.raises(TypeError, match="must be an integer"):
        rt[1.5]


def test_getitem_with_a_tensor_index():
    rt = tf.ragged.constant(ROWS)
    index = tf.placeholder(tf.int32, [])
    assert run(rt[index], {index: 3}).tolist() == ROWS[3]


# --- elementwise dispatch --------------------------------------------------------------------
BINARY = [(tf.add, np.add), (tf.subtract, np.subtract), (tf.multiply, np.multiply),
          (tf.maximum, np.maximum), (tf.truediv, np.true_divide), (tf.pow, np.power),
          (tf.less, np.less), (tf.equal, np.equal), (tf.squared_difference,
                                                     lambda x, y: (x - y) ** 2)]


@pytest.mark.parametrize("op,reference", BINARY, ids=[r[0].__name__ for r in BINARY])
def test_binary_math_on_same_partition_ragged(op, reference):
    rng = np.random.default_rng(3)
    rows = random_rows(rng, 5)
    splits = splits_of(rows)
    x = np.abs(np.array(flat_of(rows))) + 0.5
    y = rng.uniform(0.5, 2.0, len(x))
    a = tf.RaggedTensor.from_row_splits(tf.constant(x), splits)
    b = tf.RaggedTensor.from_row_splits(tf.constant(y), splits)
    got = run(op(a, b))
    np.testing.assert_allclose(got.flat_values, reference(x, y))
    np.testing.assert_array_equal(got.row_splits, splits)
    scalar = run(op(a, 2.0))
    np.testing.assert_allclose(scalar.flat_values, reference(x, 2.0))


def test_unary_ops_operators_and_cast():
    rt = tf.ragged.constant([[1.0, -2.0], [], [3.5]])
    flat = np.array([1.0, -2.0, 3.5], np.float32)
    cases = [(tf.abs(rt), np.abs(flat)), (tf.negative(rt), -flat), (tf.square(rt), flat ** 2),
             (-rt, -flat), (abs(rt), np.abs(flat)), (rt + 1.0, flat + 1), (2.0 * rt, 2 * flat),
             (rt - rt, flat * 0), (rt / 2.0, flat / 2), (tf.exp(rt), np.exp(flat)),
             (tf.cast(rt, tf.int32), flat.astype(np.int32)), (rt > 0.0, flat > 0)]
    for result, expected in cases:
        assert isinstance(result, tf.RaggedTensor)
        got = run(result)
        np.testing.assert_allclose(got.flat_values, expected, rtol=1e-6)
        assert got.to_list()[1] == []
    assert run(tf.logical_not(rt > 0.0)).to_list() == [[False, True], [], [False]]


def test_dense_tensor_plus_ragged_and_inner_broadcast():
    rt = tf.ragged.constant([[[1.0, 2.0]], [], [[3.0, 4.0], [5.0, 6.0]]], ragged_rank=1)
    got = run(tf.constant([10.0, 20.0]) + rt)
    assert got.to_list() == [[[11.0, 22.0]], [], [[13.0, 24.0], [15.0, 26.0]]]
    with pytest.raises(ValueError, match="does not broadcast against the flat values"):
        tf.ragged.constant([[1.0], [2.0]]) + tf.constant([[1.0], [2.0]])


def test_mismatched_partitions_fail_at_run_time():
    a = tf.ragged.constant([[1, 2], [3]])
    b = tf.ragged.constant([[1], [2, 3]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="row_splits differ"):
        run(a + b)
    with pytest.raises(ValueError, match="do not share a row partition"):
        a + tf.ragged.constant([[[1]], [[2]]])


def test_map_flat_values():
    rt = tf.ragged.constant([[1.0, 2.0], [3.0]])
    assert run(tf.ragged.map_flat_values(tf.square, rt)).to_list() == [[1.0, 4.0], [9.0]]
    both = tf.ragged.map_flat_values(tf.add, rt, rt * 10.0)
    assert run(both).to_list() == [[11.0, 22.0], [33.0]]
    with pytest.raises(ValueError, match="keep the number of flat values"):
        tf.ragged.map_flat_values(tf.reduce_sum, rt)
    dense = tf.ragged.map_flat_values(tf.add, tf.constant(1.0), 2.0)
    assert run(dense) == 3.0


# --- constant, constant_value, range ---------------------------------------------------------
@pytest.mark.parametrize("pylist,kwargs,expected_rank,dtype", [
    ([[1, 2], [3]], {}, 1, np.int32), ([[1.5], []], {}, 1, np.float32),
    ([[[1, 2], [3]], [[4]]], {}, 2, np.int32), ([["a"], ["b", "c"]], {}, 1, object),
    ([[[1, 2], [3, 4]], [[5, 6]]], {"ragged_rank": 1}, 1, np.int32),
    ([[[1, 2], [3, 4]], [[5, 6]]], {"inner_shape": (2,)}, 1, np.int32),
    ([[True], [False, True]], {}, 1, np.bool_), ([[1, 2]], {"dtype": tf.float64}, 1, np.float64),
    ([[[]], []], {}, 2, np.float32)])
def test_constant_value_structure(pylist, kwargs, expected_rank, dtype):
    value = tf.ragged.constant_value(pylist, **kwargs)
    assert isinstance(value, tf.ragged.RaggedTensorValue)
    assert value.ragged_rank == expected_rank and value.flat_values.dtype == dtype
    if "inner_shape" in kwargs:
        assert value.to_list() == [[[1, 2], [3, 4]], [[5, 6]]]
    else:
        expected = [[s.encode() if isinstance(s, str) else s for s in r] for r in pylist] \
            if dtype is object else pylist
        assert value.to_list() == expected
    assert as_list(run(tf.ragged.constant(pylist, **kwargs))) == value.to_list()


def test_constant_value_errors():
    with pytest.raises(ValueError, match="same nesting depth"):
        tf.ragged.constant_value([[1, [2]]])
    with pytest.raises(ValueError, match="got a scalar"):
        tf.ragged.constant_value(3)
    with pytest.raises(ValueError, match="needs scalars nested"):
        tf.ragged.constant_value([1, 2], ragged_rank=1)
    with pytest.raises(ValueError, match="uniform arrays"):
        tf.ragged.constant_value([[[1, 2], [3]]], ragged_rank=1)


@pytest.mark.parametrize("args,kwargs", [
    (([3, 0, 5, 2], [5, 2, 9, 2], [1, 1, 2, 1]), {}), ((4,), {}), (([0, 10], 5, 2), {}),
    (([5, 0], [0, 5], [-2, 3]), {}), (([0.0, 1.0], [1.0, 2.0], 0.25), {}),
    (([2, 3],), {"dtype": tf.int64})])
def test_range_matches_python(args, kwargs):
    starts, limits, deltas = (args + (None, 1))[:3] if len(args) > 1 else (0, args[0], 1)
    if len(args) == 3:
        deltas = args[2]
    n = max(np.size(starts), np.size(limits), np.size(deltas))
    bcast = [np.broadcast_to(np.asarray(v), (n,)) for v in (starts, limits, deltas)]
    expected = [np.arange(s, l, d).tolist() for s, l, d in zip(*bcast)]
    got = run(tf.ragged.range(*args, **kwargs))
    for row, want in zip(got.to_list(), expected):
        np.testing.assert_allclose(row, want)
    assert len(got.to_list()) == len(expected)


def test_segment_id_conversions_round_trip():
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 4, 9)
    splits = np.concatenate([[0], np.cumsum(lengths)])
    ids = np.repeat(np.arange(9), lengths)
    got_ids, got_splits = run([tf.ragged.row_splits_to_segment_ids(splits),
                               tf.ragged.segment_ids_to_row_splits(ids, num_segments=9)])
    np.testing.assert_array_equal(got_ids, ids)
    np.testing.assert_array_equal(got_splits, splits)
    inferred = run(tf.ragged.segment_ids_to_row_splits([0, 0, 2]))
    np.testing.assert_array_equal(inferred, [0, 2, 2, 3])


# --- masks, partitions, stack, fill ----------------------------------------------------------
def test_boolean_mask_cases():
    dense = [[1, 2, 3], [4, 5, 6]]
    mask2 = [[True, False, True], [False, False, True]]
    assert run(tf.ragged.boolean_mask(dense, mask2)).to_list() == [[1, 3], [6]]
    np.testing.assert_array_equal(run(tf.ragged.boolean_mask(dense, [False, True])), [dense[1]])
    rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    rmask = tf.ragged.constant([[True, False, True], [False], [True, True]])
    assert run(tf.ragged.boolean_mask(rt, rmask)).to_list() == [[1, 3], [], [5, 6]]
    assert run(tf.ragged.boolean_mask(rt, [True, False, True])).to_list() == [[1, 2, 3], [5, 6]]
    nested = tf.ragged.constant(NESTED)
    nmask = tf.ragged.constant([[[True, False], [True]], [], [[False, True, True], [], [False]]])
    assert run(tf.ragged.boolean_mask(nested, nmask)).to_list() == [[[1], [3]], [],
                                                                    [[5, 6], [], []]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="lengths of data's rows"):
        run(tf.ragged.boolean_mask(rt, tf.ragged.constant([[True], [False, True], [True]])))
    with pytest.raises(ValueError, match="does not fit data"):
        tf.ragged.boolean_mask([1, 2], [[True, False]])


def test_stack_dynamic_partitions_matches_python():
    rng = np.random.default_rng(11)
    data = rng.standard_normal(12)
    parts = rng.integers(0, 4, 12)
    got = run(tf.ragged.stack_dynamic_partitions(data, parts, 5)).to_list()
    assert got == [data[parts == i].tolist() for i in range(5)]


def test_stack_rows_of_ragged_and_dense():
    got = run(tf.ragged.stack([tf.ragged.constant([[1], [2, 3]]), tf.ragged.constant([[4]])]))
    assert got.to_list() == [[[1], [2, 3]], [[4]]]
    mixed = run(tf.ragged.stack([tf.constant([[1, 2]]), tf.ragged.constant([[3]])]))
    assert mixed.to_list() == [[[1, 2]], [[3]]]


def test_ragged_fill_empty_rows_and_its_gradient_helper():
    rowids, values = [0, 0, 2, 5], [1.0, 2.0, 3.0, 4.0]
    out_ids, out_values, empty, reverse = run(
        tf.ragged_fill_empty_rows(rowids, values, 6, -1.0))
    np.testing.assert_array_equal(out_ids, [0, 0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(out_values, [1, 2, -1, 3, -1, -1, 4])
    np.testing.assert_array_equal(empty, [False, True, False, True, True, False])
    np.testing.assert_array_equal(reverse, [0, 1, 3, 6])
    grads = np.arange(7, dtype=np.float32)
    d_values, d_default = run(tf.ragged_fill_empty_rows_grad(reverse, grads))
    np.testing.assert_array_equal(d_values, grads[[0, 1, 3, 6]])
    assert d_default == grads[[2, 4, 5]].sum()


# --- Session feeds and fetches, specs, values ------------------------------------------------
def test_placeholder_feed_and_fetch():
    ph = tf.ragged.placeholder(tf.float32, ragged_rank=2, value_shape=[2])
    value = tf.ragged.constant_value([[[[1, 2]], []], [[[3, 4], [5, 6]]]], ragged_rank=2,
                                     dtype=tf.float32)
    got = run({"double": ph * 2.0, "rows": ph.row_lengths()}, {ph: value})
    assert isinstance(got["double"], tf.ragged.RaggedTensorValue)
    assert got["double"].to_list() == [[[[2, 4]], []], [[[6, 8], [10, 12]]]]
    np.testing.assert_array_equal(got["rows"], [2, 1])
    with pytest.raises(ValueError, match="ragged_rank"):
        run(ph, {ph: tf.ragged.constant_value([[1.0]])})
    with pytest.raises(TypeError, match="RaggedTensorValue"):
        run(ph, {ph: [[1.0]]})


def test_make_callable_and_nested_fetches_rebuild_ragged_values():
    flat = tf.placeholder(tf.float32, [None])
    rt = tf.RaggedTensor.from_row_lengths(flat, [1, 2])
    with tf.Session() as session:
        doubled = session.make_callable(rt * 2.0, [flat])
        assert doubled([1.0, 2.0, 3.0]).to_list() == [[2.0], [4.0, 6.0]]
        got = session.run({"a": [rt, rt.row_lengths()]}, {flat: [4.0, 5.0, 6.0]})
    assert got["a"][0].to_list() == [[4.0], [5.0, 6.0]] and got["a"][1].tolist() == [1, 2]


def test_to_list_and_eval_use_the_default_session():
    rt = tf.ragged.constant([[1, 2], [], [3]])
    with tf.Session().as_default():
        assert rt.to_list() == [[1, 2], [], [3]]
        assert rt.eval().row_splits.tolist() == [0, 2, 2, 3]
    with pytest.raises(ValueError, match="default session"):
        rt.to_list()


def test_ragged_tensor_value_and_spec():
    value = tf.ragged.RaggedTensorValue(
        tf.ragged.RaggedTensorValue(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 3])),
        np.array([0, 1, 2]))
    assert value.ragged_rank == 2 and value.shape == (2, None, None)
    assert value.dtype == tf.float64 and value.to_list() == [[[1.0, 2.0]], [[3.0]]]
    spec = tf.RaggedTensorSpec([None, None, None], tf.float64)
    assert spec.ragged_rank == 2 and spec.row_splits_dtype == tf.int64
    assert spec.is_compatible_with(value) and spec.value_type is tf.RaggedTensor
    assert spec == tf.RaggedTensorSpec.from_value(tf.ragged.constant([[[1.0]]], tf.float64)) \
        or spec.is_compatible_with(tf.ragged.constant([[[1.0]]], tf.float64))
    assert not spec.is_compatible_with(tf.ragged.constant_value([[1.0]], tf.float64))
    with pytest.raises(ValueError, match="ragged_rank must be in"):
        tf.RaggedTensorSpec([None, None], ragged_rank=2)
    with pytest.raises(TypeError, match="row_splits must be an int32/int64 vector"):
        tf.ragged.RaggedTensorValue(np.array([1.0]), np.array([0.0, 1.0]))


# --- gradients flow through the values -------------------------------------------------------
SPLITS = np.array([0, 2, 2, 5, 6])


def test_gradient_of_to_tensor():
    check_gradients(lambda v: tf.RaggedTensor.from_row_splits(v, SPLITS).to_tensor(),
                    [np.linspace(-1, 1, 6)], name="to_tensor")


def test_gradient_of_nested_to_tensor_with_default():
    def fn(v):
        rt = tf.RaggedTensor.from_nested_row_splits(v, [[0, 2, 3], [0, 1, 3, 6]])
        return rt.to_tensor(default_value=0.5)
    check_gradients(fn, [np.linspace(-1, 1, 6)], name="nested to_tensor")


def test_gradient_of_map_flat_values_getitem_and_math():
    def fn(v, w):
        a = tf.RaggedTensor.from_row_splits(v, SPLITS)
        b = tf.RaggedTensor.from_row_splits(w, SPLITS)
        mapped = tf.ragged.map_flat_values(tf.tanh, a * b + a)
        return [mapped[2], mapped[2:, 0], mapped[1:].to_tensor(), mapped.to_sparse().values]
    rng = np.random.default_rng(2)
    check_gradients(fn, [rng.standard_normal(6), rng.standard_normal(6)], order=2,
                    name="map_flat_values")


def test_gradient_of_from_tensor_and_boolean_mask():
    mask = np.array([[True, False, True], [True, True, False]])

    def fn(x):
        rt = tf.RaggedTensor.from_tensor(x, lengths=[2, 3])
        return [rt.to_tensor(), tf.ragged.boolean_mask(x, mask).flat_values]
    check_gradients(fn, [np.arange(6.0).reshape(2, 3) / 7], name="from_tensor")
