"""State ops through tf.Variable: VariableV2 storage, Assign/AssignAdd/AssignSub, the Scatter
updates and IsVariableInitialized, against NumPy references applied step by step.

A row: the update (built from the variable and input tensors), the NumPy reference of one
update, the variable's initial value and the inputs' domains, the dtypes. Each row runs three
steps, checking the op's output and the variable after each, and that the variable keeps its
dtype and static shape."""
from dataclasses import dataclass

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import state_ops

from .op_harness import ALL_FLOATS, INTS, Fixed, Floats, Ints, rng_for

REALS = ALL_FLOATS + INTS


@dataclass
class UpdateCase:
    name: str
    op_types: frozenset
    build: object      # fn(variable, *tensors) -> the update's output tensor
    reference: object  # fn(value, *arrays) -> the variable's new value
    initial: object    # domain of the initial value
    inputs: tuple      # domains of the update's inputs
    dtypes: tuple = REALS


def _scatter(op, indices, updates, value):
    value = value.copy()
    if op == "update":
        value[indices] = updates
    elif op == "add":
        np.add.at(value, indices, updates)
    else:
        np.subtract.at(value, indices, updates)
    return value


def _set(value, new):
    return np.broadcast_to(new, value.shape).astype(value.dtype)


CASES = [
    UpdateCase("assign", {"VariableV2", "Assign"}, tf.assign, lambda v, x: _set(v, x),
               Floats((2, 3)), (Floats((2, 3)),)),
    UpdateCase("assign_method", {"VariableV2", "Assign"}, lambda var, x: var.assign(x),
               lambda v, x: _set(v, x), Floats((3,)), (Floats((3,)),)),
    UpdateCase("assign_add", {"VariableV2", "AssignAdd"}, tf.assign_add, lambda v, x: v + x,
               Floats((2, 3)), (Floats((2, 3)),)),
    UpdateCase("assign_add_method", {"VariableV2", "AssignAdd"},
               lambda var, x: var.assign_add(x), lambda v, x: v + x, Floats((4,)),
               (Floats((4,)),)),
    UpdateCase("assign_sub", {"VariableV2", "AssignSub"}, tf.assign_sub, lambda v, x: v - x,
               Floats((2, 3)), (Floats((2, 3)),)),
    UpdateCase("assign_sub_method", {"VariableV2", "AssignSub"},
               lambda var, x: var.assign_sub(x), lambda v, x: v - x, Floats(()), (Floats(()),)),
    UpdateCase("scatter_update", {"VariableV2", "ScatterUpdate"}, tf.scatter_update,
               lambda v, i, u: _scatter("update", i, u, v), Floats((4, 2)),
               (Fixed([3, 0], np.int32), Floats((2, 2)))),
    UpdateCase("scatter_update_matrix_indices", {"VariableV2", "ScatterUpdate"},
               tf.scatter_update, lambda v, i, u: _scatter("update", i, u, v), Floats((5, 2)),
               (Fixed([[4, 0], [1, 2]], np.int64), Floats((2, 2, 2)))),
    UpdateCase("scatter_add_repeated", {"VariableV2", "ScatterAdd"}, tf.scatter_add,
               lambda v, i, u: _scatter("add", i, u, v), Floats((4, 3)),
               (Fixed([1, 1, 3], np.int32), Floats((3, 3)))),
    UpdateCase("scatter_add_vector", {"VariableV2", "ScatterAdd"}, tf.scatter_add,
               lambda v, i, u: _scatter("add", i, u, v), Floats((5,)),
               (Ints((3,), 0, 5, np.int64), Floats((3,)))),
    UpdateCase("scatter_sub_repeated", {"VariableV2", "ScatterSub"}, tf.scatter_sub,
               lambda v, i, u: _scatter("sub", i, u, v), Floats((4, 3)),
               (Fixed([2, 0, 2], np.int32), Floats((3, 3)))),
    UpdateCase("scatter_sub_method", {"VariableV2", "ScatterSub"},
               lambda var, i, u: var.scatter_sub(tf.IndexedSlices(u, i)),
               lambda v, i, u: _scatter("sub", i, u, v), Floats((3, 2)),
               (Fixed([2, 2], np.int32), Floats((2, 2)))),
    UpdateCase("scatter_add_method", {"VariableV2", "ScatterAdd"},
               lambda var, i, u: var.scatter_add(tf.IndexedSlices(u, i)),
               lambda v, i, u: _scatter("add", i, u, v), Floats((3, 2)),
               (Fixed([0, 2], np.int32), Floats((2, 2)))),
    UpdateCase("scatter_update_method", {"VariableV2", "ScatterUpdate"},
               lambda var, i, u: var.scatter_update(tf.IndexedSlices(u, i)),
               lambda v, i, u: _scatter("update", i, u, v), Floats((3, 2)),
               (Fixed([1], np.int32), Floats((1, 2)))),
]
COVERED_OP_TYPES = set().union(*(case.op_types for case in CASES)) | {"IsVariableInitialized"}


def _params():
    return [pytest.param(case, np.dtype(dtype), id=f"{case.name}-{np.dtype(dtype).name}")
            for case in CASES for dtype in case.dtypes]


@pytest.mark.parametrize("case,dtype", _params())
def test_update_matches_numpy_for_several_steps(case, dtype):
    rng = rng_for(case.name, dtype.name)
    initial = case.initial(rng, dtype)
    with tf.Graph().as_default() as graph:
        var = tf.Variable(initial)
        assert var.dtype.np_dtype == dtype
        placeholders = []
        for index, domain in enumerate(case.inputs):
            sample = domain(rng_for(case.name), dtype)
            placeholders.append(tf.placeholder(tf.as_dtype(sample.dtype), sample.shape,
                                               name=f"input{index}"))
        update = case.build(var, *placeholders)
        present = {op.type for op in graph.get_operations()}
        assert case.op_types <= present, f"{case.name}: graph lacks {case.op_types - present}"
        assert update.dtype.np_dtype == dtype
        assert update.shape.is_compatible_with(initial.shape)
        expected = initial
        with tf.Session() as session:
            session.run(var.initializer)
            for step in range(3):
                arrays = [domain(rng, dtype) for domain in case.inputs]
                expected = case.reference(expected, *arrays)
                got = session.run(update, dict(zip(placeholders, arrays)))
                stored = session.run(var)
                for label, value in (("output", got), ("variable", stored)):
                    value = np.asarray(value)
                    where = f"{case.name}[{dtype.name}] step {step} {label}"
                    assert value.dtype == dtype, f"{where}: dtype {value.dtype}"
                    assert value.shape == initial.shape, f"{where}: shape {value.shape}"
                    if dtype.kind == "f":
                        np.testing.assert_allclose(value, expected, rtol=1e-3 if dtype ==
                                                   np.float16 else 1e-6, err_msg=where)
                    else:
                        np.testing.assert_array_equal(value, expected, err_msg=where)


# --- variables: storage, initialisation, reads ----------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64,
                                   np.bool_])
def test_variable_stores_its_initial_value_with_its_dtype(dtype):
    value = np.arange(6).reshape(2, 3).astype(dtype)
    with tf.Graph().as_default():
        var = tf.Variable(value, name="stored")
        assert var.op.type == "VariableV2"
        assert var.shape.as_list() == [2, 3]
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            got = session.run(var)
            read = session.run(var.read_value())
    for item in (got, read):
        assert item.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(item, value)


def test_is_variable_initialized_before_and_after_init():
    with tf.Graph().as_default():
        var = tf.Variable([1.0, 2.0])
        flag = tf.is_variable_initialized(var)
        assert flag.dtype == tf.bool and flag.shape.ndims == 0
        assert flag.op.type == "IsVariableInitialized"
        with tf.Session() as session:
            before = session.run(flag)
            session.run(var.initializer)
            after = session.run(flag)
    assert before.dtype == np.bool_ and not before
    assert after


def test_uninitialized_read_raises_failed_precondition_naming_the_variable():
    with tf.Graph().as_default():
        var = tf.Variable([1.0], name="never_set")
        with tf.Session() as session:
            with pytest.raises(tf.errors.FailedPreconditionError, match="never_set"):
                session.run(var + 1.0)
            with pytest.raises(tf.errors.FailedPreconditionError, match="never_set"):
                session.run(tf.assign_add(var, [1.0]))


def test_fetched_value_is_a_snapshot_not_a_live_reference():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros(3))
        with tf.Session() as session:
            session.run(var.initializer)
            before = session.run(var)
            returned = session.run(tf.assign_add(var, np.ones(3)))
            session.run(tf.assign(var, np.full(3, 7.0)))
            after = session.run(var)
    np.testing.assert_array_equal(before, [0, 0, 0])
    np.testing.assert_array_equal(returned, [1, 1, 1])
    np.testing.assert_array_equal(after, [7, 7, 7])


def test_assign_without_shape_validation_can_change_the_shape():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros(2), validate_shape=False)
        bigger = tf.assign(var, np.ones((2, 2)), validate_shape=False)
        assert bigger.shape.as_list() == [2, 2]
        with tf.Session() as session:
            session.run(var.initializer)
            np.testing.assert_array_equal(session.run(bigger), np.ones((2, 2)))


def test_variables_live_per_session():
    with tf.Graph().as_default():
        var = tf.Variable(1.0)
        bump = tf.assign_add(var, 1.0)
        with tf.Session() as first:
            first.run(var.initializer)
            first.run(bump)
            assert first.run(var) == 2.0
        with tf.Session() as second:
            second.run(var.initializer)
            assert second.run(var) == 1.0


def test_raw_variable_op_and_assign():
    with tf.Graph().as_default():
        ref = state_ops.variable_op_v2([2], tf.float32, name="raw")
        init = tf.assign(ref, [3.0, 4.0])
        with tf.Session() as session:
            session.run(init)
            value = session.run(ref)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, [3.0, 4.0])


# --- bad inputs ---------------------------------------------------------------------------------
def test_assign_shape_mismatch_names_the_op_at_build_time():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros((2, 3)))
        with pytest.raises(ValueError, match=r"my_assign.*Assign"):
            tf.assign(var, np.zeros((3, 2)), name="my_assign")
        with pytest.raises(ValueError, match="AssignAdd"):
            tf.assign_add(var, np.zeros(4))
        with pytest.raises(ValueError, match=r"my_scatter.*ScatterUpdate"):
            tf.scatter_update(var, [0], np.zeros((1, 4)), name="my_scatter")


def test_update_dtype_mismatch_raises_type_error_naming_the_op():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros(2, np.float32))
        with pytest.raises(TypeError, match=r"my_assign.*Assign"):
            tf.assign(var, tf.constant([1, 2]), name="my_assign")
        with pytest.raises(TypeError, match="AssignSub"):
            tf.assign_sub(var, tf.zeros([2], tf.float64))
        with pytest.raises(TypeError, match="ScatterAdd"):
            tf.scatter_add(var, [0], tf.zeros([1], tf.float64))
        with pytest.raises(TypeError, match="ScatterAdd"):
            tf.scatter_add(var, tf.constant([0.0]), tf.zeros([1]))


def test_scatter_index_out_of_range_raises_invalid_argument_naming_the_op():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros((3, 2)))
        indices = tf.placeholder(tf.int32, [1])
        update = tf.scatter_add(var, indices, np.ones((1, 2)), name="my_scatter_add")
        with tf.Session() as session:
            session.run(var.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match="my_scatter_add"):
                session.run(update, {indices: [3]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="my_scatter_add"):
                session.run(update, {indices: [-1]})
            np.testing.assert_array_equal(session.run(var), np.zeros((3, 2)))


def test_assign_run_time_shape_mismatch_raises_invalid_argument():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros(2))
        value = tf.placeholder(tf.float64)
        update = tf.assign(var, value, name="late_assign")
        with tf.Session() as session:
            session.run(var.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match="late_assign"):
                session.run(update, {value: np.zeros(3)})


# Ops whose kernels may return a view of their input: a fetched value must not change when the
# variable behind it is later updated in place.
VIEW_OPS = [
    ("identity", tf.identity),
    ("reshape", lambda v: tf.reshape(v, [4])),
    ("expand_dims", lambda v: tf.expand_dims(v, 0)),
    ("squeeze", lambda v: tf.squeeze(tf.reshape(v, [1, 2, 2]))),
    ("broadcast_to", lambda v: tf.broadcast_to(v, [3, 2, 2])),
    ("split", lambda v: tf.split(v, 2, axis=1)[1]),
    ("unstack", lambda v: tf.unstack(v, axis=0)[0]),
    ("transpose_identity_perm", lambda v: tf.transpose(v, [0, 1])),
    ("stop_gradient", tf.stop_gradient),
    ("sum_to_same_shape", lambda v: state_ops.make_tensor("SumToShape", [v, tf.shape(v)])),
]


@pytest.mark.parametrize("build", [b for _, b in VIEW_OPS], ids=[n for n, _ in VIEW_OPS])
def test_fetched_views_of_a_variable_do_not_change_with_it(build):
    with tf.Graph().as_default():
        var = tf.Variable(np.arange(4.0).reshape(2, 2))
        view = build(var.value())
        bump = tf.assign_add(var, np.ones((2, 2)))
        with tf.Session() as session:
            session.run(var.initializer)
            fetched = session.run(view)
            before = np.array(fetched, copy=True)
            session.run(bump)
    np.testing.assert_array_equal(fetched, before)
