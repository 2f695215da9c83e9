"""tf.Variable: creation, collections, initialization, reads, updates and session ownership."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as fresh:
        yield fresh


# --- creation ------------------------------------------------------------------------------------
def test_initial_value_from_python_numpy_tensor_and_callable():
    from_list = tf.Variable([1.0, 2.0], name="from_list")
    from_numpy = tf.Variable(np.arange(6, dtype=np.float64).reshape(2, 3), name="from_numpy")
    from_tensor = tf.Variable(tf.constant([[1, 2]]), name="from_tensor")
    from_callable = tf.Variable(lambda: tf.ones([3], tf.int64), name="from_callable")
    assert (from_list.dtype, from_list.shape.as_list()) == (tf.float32, [2])
    assert (from_numpy.dtype, from_numpy.shape.as_list()) == (tf.float64, [2, 3])
    assert (from_tensor.dtype, from_tensor.shape.as_list()) == (tf.int32, [1, 2])
    assert (from_callable.dtype, from_callable.shape.as_list()) == (tf.int64, [3])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(from_list), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(from_numpy), np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(sess.run(from_tensor), [[1, 2]])
        np.testing.assert_array_equal(sess.run(from_callable), [1, 1, 1])
        assert sess.run(from_callable).dtype == np.int64


def test_dtype_argument_converts_python_values():
    var = tf.Variable([1, 2], dtype=tf.float64, name="v")
    assert var.dtype is tf.float64
    with pytest.raises((TypeError, ValueError)):
        tf.Variable(tf.constant([1, 2]), dtype=tf.float32)


def test_missing_initial_value_raises():
    with pytest.raises(ValueError, match="initial_value"):
        tf.Variable()


def test_names_are_unique_and_follow_name_scopes(graph):
    assert tf.Variable(1.0).name == "Variable:0"
    assert tf.Variable(1.0).name == "Variable_1:0"
    assert tf.Variable(1.0, name="w").op.name == "w"
    assert tf.Variable(1.0, name="w").op.name == "w_1"
    with tf.name_scope("layer"):
        var = tf.Variable(1.0, name="kernel")
    assert var.name == "layer/kernel:0"
    assert var.op.type == "VariableV2"
    assert var.initializer.name == "layer/kernel/Assign"
    assert var.value().name == "layer/kernel/read:0"
    assert var.graph is graph


def test_initializer_ops_of_a_callable_are_colocated_with_the_variable():
    with tf.device(lambda op: "/job:ps/task:0" if op.type == "VariableV2" else "/job:worker"):
        var = tf.Variable(lambda: tf.random_normal([2, 2]), name="v")
    assert var.device == "/job:ps/task:0"
    assert var.initializer.device == "/job:ps/task:0"
    assert var.initial_value.device == "/job:ps/task:0"
    assert var.initial_value.op.get_attr("_class") == ["loc:@v"]


def test_variables_ignore_enclosing_control_dependencies():
    counter = tf.Variable(0, name="counter")
    bump = counter.assign_add(1)
    with tf.control_dependencies([bump]):
        inner = tf.Variable(lambda: tf.zeros([2]), name="inner")
        after = tf.identity(counter.value(), name="after")
    for op in (inner.op, inner.initializer, inner.value().op, inner.initial_value.op):
        assert op.control_inputs == []
    assert after.op.control_inputs == [bump.op]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(inner)
        sess.run(inner.value())
        assert sess.run(counter) == 0


def test_caching_device_places_the_snapshot():
    with tf.device("/job:ps/task:0"):
        var = tf.Variable(1.0, name="v", caching_device="/job:worker/task:1")
    assert var.device == "/job:ps/task:0"
    assert var.value().device == "/job:worker/task:1"
    assert var.initializer.device == "/job:ps/task:0"


def test_collections_and_trainability(graph):
    trained = tf.Variable(1.0, name="trained")
    frozen = tf.Variable(1.0, trainable=False, name="frozen")
    local = tf.Variable(1.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], trainable=False,
                        name="local")
    custom = tf.Variable(1.0, collections=["mine", tf.GraphKeys.GLOBAL_VARIABLES], name="custom")
    assert tf.global_variables() == [trained, frozen, custom]
    assert tf.all_variables() == tf.global_variables()
    assert tf.trainable_variables() == [trained, custom]
    assert tf.local_variables() == [local]
    assert tf.get_collection("mine") == [custom]
    assert trained.trainable and not frozen.trainable
    assert tf.global_variables(scope="tr") == [trained]
    assert tf.trainable_variables(scope="custom") == [custom]


def test_validate_shape_false_allows_unknown_and_changing_shapes():
    shape_source = tf.placeholder(tf.int32, [None])
    var = tf.Variable(tf.zeros(shape_source), validate_shape=False, name="flexible")
    assert var.shape.ndims is None
    with pytest.raises(ValueError, match="shape"):
        tf.Variable(tf.zeros(shape_source))
    grow = tf.assign(var, tf.ones([4]), validate_shape=False)
    with tf.Session() as sess:
        sess.run(var.initializer, {shape_source: [2, 3]})
        assert sess.run(var).shape == (2, 3)
        np.testing.assert_array_equal(sess.run(grow), np.ones(4))
        assert sess.run(var).shape == (4,)


def test_shape_argument_overrides_the_initial_value_shape():
    var = tf.Variable(tf.zeros([2, 3]), shape=tf.TensorShape([None, 3]), validate_shape=False)
    assert var.shape.as_list() == [None, 3]


def test_initial_value_and_initializer_properties():
    var = tf.Variable([3.0], name="v")
    assert var.initializer.type == "Assign"
    assert var.initial_value.op.type == "Const"
    assert var.initializer.inputs[1] is var.initial_value
    assert var.initializer.inputs[0] is var.op.outputs[0]


# --- reads, updates, sessions --------------------------------------------------------------------
def test_uninitialized_read_names_the_variable():
    var = tf.Variable([1.0], name="never_initialized")
    doubled = var * 2
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="never_initialized"):
            sess.run(var)
        with pytest.raises(tf.errors.FailedPreconditionError, match="never_initialized"):
            sess.run(doubled)


def test_assign_family_returns_updated_values():
    var = tf.Variable([1.0, 2.0], name="v")
    assign = var.assign([10.0, 20.0])
    add = var.assign_add([1.0, 1.0])
    sub = var.assign_sub([0.5, 0.5])
    with tf.Session() as sess:
        sess.run(var.initializer)
        np.testing.assert_array_equal(sess.run(assign), [10.0, 20.0])
        np.testing.assert_array_equal(sess.run(add), [11.0, 21.0])
        np.testing.assert_array_equal(sess.run(add), [12.0, 22.0])
        np.testing.assert_array_equal(sess.run(sub), [11.5, 21.5])
        np.testing.assert_array_equal(sess.run(var), [11.5, 21.5])
    assert isinstance(var.assign([1.0, 1.0], read_value=False), tf.Operation)
    assert isinstance(var.assign_add([1.0, 1.0], read_value=False), tf.Operation)
    assert isinstance(var.assign_sub([1.0, 1.0], read_value=False), tf.Operation)


def test_assign_shape_mismatch_fails_at_graph_build_time():
    var = tf.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError, match="incompatible"):
        var.assign([1.0, 2.0, 3.0])


def test_state_ops_module_functions():
    var = tf.Variable([1, 2, 3], name="v")
    updated = tf.scatter_update(var, [0, 2], [7, 9])
    with tf.Session() as sess:
        sess.run(var.initializer)
        np.testing.assert_array_equal(sess.run(tf.assign_add(var, [1, 1, 1])), [2, 3, 4])
        np.testing.assert_array_equal(sess.run(tf.assign_sub(var, [2, 2, 2])), [0, 1, 2])
        np.testing.assert_array_equal(sess.run(tf.assign(var, [5, 5, 5])), [5, 5, 5])
        np.testing.assert_array_equal(sess.run(updated), [7, 5, 9])


def test_read_value_and_value():
    var = tf.Variable(5.0, name="v")
    read = var.read_value()
    assert read.op.type == "Identity" and read.op.inputs[0] is var.op.outputs[0]
    assert var.value() is var.value()
    assert var.value().dtype is tf.float32
    with tf.Session() as sess:
        sess.run(var.initializer)
        sess.run(var.assign(6.0))
        assert sess.run(read) == 6.0
        assert sess.run(var.value()) == 6.0


def test_eval_and_load_with_a_default_session():
    var = tf.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError):
        var.load([0.0, 0.0])
    with tf.Session() as sess:
        var.initializer.run()
        np.testing.assert_array_equal(var.eval(), [1.0, 2.0])
        var.load([3.0, 4.0])
        np.testing.assert_array_equal(var.eval(), [3.0, 4.0])
        np.testing.assert_array_equal(var.eval(session=sess), [3.0, 4.0])
        other = tf.Session()
        var.load([7.0, 8.0], session=other)
        np.testing.assert_array_equal(var.eval(session=other), [7.0, 8.0])
        np.testing.assert_array_equal(var.eval(), [3.0, 4.0])


def test_operator_overloads_read_the_variable():
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    x = tf.constant([[1.0], [1.0]])
    results = {
        "add": w + 1, "radd": 1 + w, "sub": w - 1, "rsub": 10 - w, "mul": w * 2,
        "div": w / 2, "neg": -w, "matmul": w @ x, "rmatmul": tf.constant([[1.0, 0.0]]) @ w,
        "pow": w ** 2, "lt": w < 2.5, "abs": abs(-w),
    }
    expected = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    with tf.Session() as sess:
        sess.run(w.initializer)
        got = sess.run(results)
    np.testing.assert_array_equal(got["add"], expected + 1)
    np.testing.assert_array_equal(got["radd"], expected + 1)
    np.testing.assert_array_equal(got["sub"], expected - 1)
    np.testing.assert_array_equal(got["rsub"], 10 - expected)
    np.testing.assert_array_equal(got["mul"], expected * 2)
    np.testing.assert_array_equal(got["div"], expected / 2)
    np.testing.assert_array_equal(got["neg"], -expected)
    np.testing.assert_array_equal(got["matmul"], expected @ np.ones((2, 1), np.float32))
    np.testing.assert_array_equal(got["rmatmul"], [[1.0, 2.0]])
    np.testing.assert_array_equal(got["pow"], expected ** 2)
    np.testing.assert_array_equal(got["lt"], expected < 2.5)
    np.testing.assert_array_equal(got["abs"], expected)


def test_variable_converts_to_a_tensor():
    var = tf.Variable([1.0], name="v")
    tensor = tf.convert_to_tensor(var)
    assert isinstance(tensor, tf.Tensor) and tensor is var.value()
    with pytest.raises(ValueError):
        tf.convert_to_tensor(var, dtype=tf.int32)
    read = tf.identity(var)  # reads the variable, as tf.identity of a TF 1.x variable does
    assert read.op.type == "Identity" and read.op.inputs[0] is var.op.outputs[0]


def test_variable_is_not_iterable_or_an_array_or_a_bool():
    var = tf.Variable([1.0, 2.0])
    with pytest.raises(TypeError):
        iter(var)
    with pytest.raises(TypeError):
        np.asarray(var)
    assert var == var and var != tf.Variable([1.0, 2.0])
    assert {var: 1}[var] == 1
    assert "Variable:0" in repr(var) and "float32" in repr(var)


def test_initialized_value_chains_initialization():
    first = tf.Variable(tf.random_normal([3], seed=1), name="first")
    second = tf.Variable(first.initialized_value() * 2, name="second")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([first, second])
    np.testing.assert_allclose(b, 2 * a, rtol=1e-6)


# --- initializers and initialization reports -----------------------------------------------------
def test_global_variables_initializer_and_its_aliases():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    init = tf.global_variables_initializer()
    assert init.type == "NoOp" and init.name == "init"
    assert set(init.control_inputs) == {a.initializer, b.initializer}
    legacy = tf.initialize_all_variables()
    assert set(legacy.control_inputs) == {a.initializer, b.initializer}
    with tf.Session() as sess:
        sess.run(legacy)
        assert sess.run([a, b]) == [1.0, 2.0]


def test_variables_initializer_covers_only_its_list():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    with tf.Session() as sess:
        sess.run(tf.variables_initializer([a]))
        assert sess.run(a) == 1.0
        with pytest.raises(tf.errors.FailedPreconditionError, match="b"):
            sess.run(b)
        sess.run(tf.initialize_variables([b]))
        assert sess.run(b) == 2.0
        sess.run(tf.variables_initializer([]))  # an empty list gives a no-op


def test_local_variables_initializer():
    glob = tf.Variable(1.0, name="glob")
    local = tf.Variable(5.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="local")
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(local) == 5.0
        assert not sess.run(tf.is_variable_initialized(glob))


def test_report_uninitialized_variables():
    a = tf.Variable(1.0, name="a")
    with tf.name_scope("scope"):
        b = tf.Variable(2.0, name="b")
    local = tf.Variable(3.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="local")
    report = tf.report_uninitialized_variables()
    only_a = tf.report_uninitialized_variables([a])
    empty = tf.report_uninitialized_variables([])
    with tf.Session() as sess:
        assert sess.run(report).tolist() == [b"a", b"scope/b", b"local"]
        sess.run(a.initializer)
        assert sess.run(report).tolist() == [b"scope/b", b"local"]
        assert sess.run(only_a).tolist() == []
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        result = sess.run(report)
        assert result.shape == (0,) and result.tolist() == []
        assert sess.run(empty).shape == (0,)
    del local


def test_is_variable_initialized():
    var = tf.Variable(1.0, name="v")
    flag = tf.is_variable_initialized(var)
    assert flag.dtype is tf.bool and flag.shape.as_list() == []
    with tf.Session() as sess:
        assert sess.run(flag) == False  # noqa: E712 - a NumPy bool
        sess.run(var.initializer)
        assert sess.run(flag) == True  # noqa: E712


def test_two_local_sessions_have_separate_variable_storage(graph):
    var = tf.Variable(0.0, name="counter")
    increment = var.assign_add(1.0)
    first, second = tf.Session(), tf.Session()
    first.run(var.initializer)
    with pytest.raises(tf.errors.FailedPreconditionError):
        second.run(var)
    second.run(var.initializer)
    for _ in range(3):
        first.run(increment)
    second.run(increment)
    assert first.run(var) == 3.0 and second.run(var) == 1.0
    first.close()
    second.close()


def test_fetched_values_are_copies_not_live_references():
    weights = tf.Variable(np.ones((2, 2), np.float32), name="weights")
    train_step = weights.assign_sub(tf.fill([2, 2], 0.5))
    with tf.Session() as sess:
        sess.run(weights.initializer)
        fetched_var = sess.run(weights)
        fetched_read = sess.run(weights.value())
        fetched_eval = weights.eval(session=sess)
        fetched_update = sess.run(train_step)
        sess.run(train_step)
        np.testing.assert_array_equal(fetched_var, np.ones((2, 2)))
        np.testing.assert_array_equal(fetched_read, np.ones((2, 2)))
        np.testing.assert_array_equal(fetched_eval, np.ones((2, 2)))
        np.testing.assert_array_equal(fetched_update, np.full((2, 2), 0.5))
        # Mutating a fetched array never reaches the variable either.
        fetched_var[:] = 42
        np.testing.assert_array_equal(sess.run(weights), np.zeros((2, 2)))


def test_variable_survives_across_runs_and_plans():
    var = tf.Variable(1.0, name="v")
    double = var.assign(var * 2)
    with tf.Session() as sess:
        sess.run(var.initializer)
        for _ in range(4):
            sess.run(double)
        assert sess.run(var) == 16.0
        assert sess.run(var + 0) == 16.0
