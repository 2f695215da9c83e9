"""tf.cond and tf.case (the If op): values against NumPy, numeric gradients through both
branches, side effects only on the taken branch, variables assigned and read inside a branch,
nested structures and conds, static shapes, build-time errors naming the cond, a GraphDef round
trip, and a two-device session."""
import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

COVERED_OP_TYPES = {"If"}


def _run(fetches, feed_dict=None, config=None):
    with tf.Session(config=config) as session:
        session.run(tf.global_variables_initializer())
        return session.run(fetches, feed_dict)


def test_cond_takes_the_branch_the_predicate_names():
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        flag = tf.placeholder(tf.bool, [])
        y = tf.cond(flag, lambda: tf.exp(x) * 2.0, lambda: tf.square(x) - 1.0, name="pick")
        assert y.op.type == "If" and y.op.name == "pick"
        assert y.shape.as_list() == [2, 3] and y.dtype == tf.float32
        value = rng.normal(size=(2, 3)).astype(np.float32)
        with tf.Session() as session:
            np.testing.assert_allclose(session.run(y, {x: value, flag: True}),
                                       np.exp(value) * 2, rtol=1e-6)
            np.testing.assert_allclose(session.run(y, {x: value, flag: False}),
                                       value ** 2 - 1, rtol=1e-6)


@pytest.mark.parametrize("taken", [True, False])
def test_gradients_flow_through_the_taken_branch(taken):
    rng = np.random.default_rng(1)

    def fn(x, w):
        return tf.cond(tf.constant(taken), lambda: tf.tanh(tf.matmul(x, w)),
                       lambda: tf.sin(x) * tf.reduce_sum(w))

    gradient_checker.check_gradients(fn, [rng.normal(size=(2, 3)), rng.normal(size=(3, 3))],
                                     order=1)


def test_gradient_of_an_untaken_branch_input_is_zero():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        w = tf.placeholder(tf.float64, [3])
        flag = tf.placeholder(tf.bool, [])
        y = tf.cond(flag, lambda: x * x, lambda: w * 3.0)
        gx, gw = tf.gradients(tf.reduce_sum(y), [x, w])
        with tf.Session() as session:
            feed = {x: [1.0, 2.0, 3.0], w: [4.0, 5.0, 6.0]}
            values = session.run([gx, gw], {**feed, flag: True})
            np.testing.assert_allclose(values[0], [2.0, 4.0, 6.0])
            np.testing.assert_allclose(values[1], [0.0, 0.0, 0.0])
            values = session.run([gx, gw], {**feed, flag: False})
            np.testing.assert_allclose(values[0], [0.0, 0.0, 0.0])
            np.testing.assert_allclose(values[1], [3.0, 3.0, 3.0])


def test_side_effects_run_only_on_the_taken_branch():
    with tf.Graph().as_default():
        then_count = tf.Variable(0, name="then_count")
        else_count = tf.Variable(0, name="else_count")
        flag = tf.placeholder(tf.bool, [])

        def bump(counter):
            def branch():
                tf.assign_add(counter, 1)  # not returned: runs because the branch is taken
                return tf.constant(1.0)
            return branch

        y = tf.cond(flag, bump(then_count), bump(else_count))
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            for value in (True, True, False, True):
                session.run(y, {flag: value})
            assert session.run([then_count, else_count]) == [3, 1]


def test_assign_in_a_branch_updates_the_variable_and_read_value_sees_it():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        flag = tf.placeholder(tf.bool, [])

        def update():
            with tf.control_dependencies([tf.assign(v, v * 10.0)]):
                return v.read_value() + 1.0

        y = tf.cond(flag, update, lambda: v.read_value())
        with tf.Session() as session:
            session.run(v.initializer)
            assert session.run(y, {flag: False}) == 1.0
            assert session.run(y, {flag: True}) == 11.0
            assert session.run(v) == 10.0
            assert session.run(y, {flag: True}) == 101.0


def test_variable_gradient_through_a_cond_trains():
    with tf.Graph().as_default():
        w = tf.Variable(3.0, name="w")
        flag = tf.placeholder(tf.bool, [])
        loss = tf.cond(flag, lambda: tf.square(w - 1.0), lambda: tf.square(w + 1.0))
        train = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
        with tf.Session() as session:
            session.run(w.initializer)
            for _ in range(30):
                session.run(train, {flag: True})
            assert abs(session.run(w) - 1.0) < 1e-3


def test_nested_outputs_keep_their_structure():
    Pair = collections.namedtuple("Pair", "first second")
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, [])
        x = tf.constant([1, 2], tf.int32)
        out = tf.cond(flag, lambda: {"a": Pair(x, 2.0), "b": [x * 3]},
                      lambda: {"a": Pair(x - 1, 5.0), "b": [x]})
        assert isinstance(out["a"], Pair) and isinstance(out["b"], list)
        with tf.Session() as session:
            got = session.run(out, {flag: True})
            np.testing.assert_array_equal(got["a"].first, [1, 2])
            assert got["a"].second == 2.0
            np.testing.assert_array_equal(got["b"][0], [3, 6])
            got = session.run(out, {flag: False})
            np.testing.assert_array_equal(got["a"].first, [0, 1])
            assert got["a"].second == 5.0


def test_single_element_lists_unpack_unless_strict():
    with tf.Graph().as_default():
        flag = tf.constant(True)
        assert isinstance(tf.cond(flag, lambda: [1.0], lambda: [2.0]), tf.Tensor)
        strict = tf.cond(flag, lambda: [1.0], lambda: [2.0], strict=True)
        assert isinstance(strict, list) and len(strict) == 1


def test_operation_branches_return_the_if_op():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        flag = tf.placeholder(tf.bool, [])
        op = tf.cond(flag, lambda: tf.assign(v, 5.0).op, lambda: tf.no_op())
        assert isinstance(op, tf.Operation) and op.type == "If"
        with tf.Session() as session:
            session.run(v.initializer)
            session.run(op, {flag: False})
            assert session.run(v) == 0.0
            session.run(op, {flag: True})
            assert session.run(v) == 5.0


def test_static_shape_is_what_both_branches_agree_on():
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, [])
        a = tf.placeholder(tf.float32, [4, 3])
        b = tf.placeholder(tf.float32, [5, 3])
        assert tf.cond(flag, lambda: a, lambda: b).shape.as_list() == [None, 3]
        assert tf.cond(flag, lambda: a, lambda: tf.reshape(b, [-1])).shape.ndims is None
        assert tf.cond(flag, lambda: a, lambda: a + 1.0).shape.as_list() == [4, 3]


def test_nested_conds_capture_through_both_levels():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [])
        p = tf.placeholder(tf.bool, [])
        q = tf.placeholder(tf.bool, [])
        y = tf.cond(p, lambda: tf.cond(q, lambda: x * 2.0, lambda: x * 3.0), lambda: x * 5.0)
        grad = tf.gradients(y, x)[0]
        with tf.Session() as session:
            for pv, qv, expected in ((True, True, 2.0), (True, False, 3.0), (False, True, 5.0)):
                value, slope = session.run([y, grad], {x: 2.0, p: pv, q: qv})
                assert value == 2.0 * expected and slope == expected


def test_control_dependency_on_an_outer_op_inside_a_branch():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        bump = tf.assign_add(v, 1.0)

        def branch():
            with tf.control_dependencies([bump]):
                return tf.constant(2.0)

        y = tf.cond(tf.constant(True), branch, lambda: tf.constant(3.0))
        assert bump.op in y.op.control_inputs
        with tf.Session() as session:
            session.run(v.initializer)
            assert session.run(y) == 2.0
            assert session.run(v) == 1.0


def test_a_failing_op_inside_a_branch_names_that_op():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.cond(x > 0, lambda: x, lambda: tf.identity(tf.debugging.check_numerics(
            tf.log(x), "log of a negative", name="checked")))
        with tf.Session() as session:
            assert session.run(y, {x: 2.0}) == 2.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="checked"):
                session.run(y, {x: -1.0})


@pytest.mark.parametrize("pred, match, error", [
    (lambda: tf.constant(1.0), "bool", TypeError),
    (lambda: tf.constant([True, False]), "scalar", ValueError),
])
def test_bad_predicates_are_refused_naming_the_cond(pred, match, error):
    with tf.Graph().as_default():
        with pytest.raises(error, match=f"tf.cond 'mine'.*{match}"):
            tf.cond(pred(), lambda: 1.0, lambda: 2.0, name="mine")


def test_branches_must_agree_in_structure_and_dtype():
    with tf.Graph().as_default():
        flag = tf.constant(True)
        with pytest.raises(ValueError, match="tf.cond 'mine'.*same structure"):
            tf.cond(flag, lambda: (1.0, 2.0), lambda: 1.0, name="mine")
        with pytest.raises(TypeError, match="tf.cond 'other'.*output 0 has dtype float32"):
            tf.cond(flag, lambda: 1.0, lambda: tf.constant(1, tf.int32), name="other")


def test_case_runs_the_first_true_predicate_or_the_default():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        y = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)),
                     (tf.less(x, 10), lambda: tf.constant(1)),
                     (tf.less(x, 5), lambda: tf.constant(5))],
                    default=lambda: tf.constant(100))
        with tf.Session() as session:
            assert [session.run(y, {x: v}) for v in (-3, 3, 7, 50)] == [-1, 1, 1, 100]


def test_case_dict_and_exclusive_check():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        y = tf.case({tf.equal(x, 1): lambda: tf.constant(10.0),
                     tf.greater(x, 0): lambda: tf.constant(20.0)},
                    default=lambda: tf.constant(0.0), exclusive=True, name="pick")
        with tf.Session() as session:
            assert session.run(y, {x: 0}) == 0.0
            assert session.run(y, {x: 3}) == 20.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="more than one"):
                session.run(y, {x: 1})


def test_case_without_default_uses_the_last_pair():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [])
        y = tf.case([(tf.equal(x, 1), lambda: tf.constant(1)),
                     (tf.equal(x, 2), lambda: tf.constant(2))])
        with tf.Session() as session:
            assert [session.run(y, {x: v}) for v in (1, 2, 3)] == [1, 2, 2]


def test_graph_def_round_trip_then_run():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [2], name="x")
        flag = tf.placeholder(tf.bool, [], name="flag")
        scale = tf.constant(3.0, name="scale")
        y = tf.cond(flag, lambda: tf.cond(flag, lambda: x * scale, lambda: x),
                    lambda: x - scale, name="y")
        tf.identity(tf.gradients(tf.reduce_sum(y), x)[0], name="grad")
        graph_def = graph.as_graph_def()
    data = graph_def.SerializeToString()
    with tf.Graph().as_default() as imported:
        tf.import_graph_def(tf.GraphDef.FromString(data), name="")
        y2 = imported.get_tensor_by_name("y:0")
        grad2 = imported.get_tensor_by_name("grad:0")
        assert y2.shape.as_list() == [2]
        with tf.Session() as session:
            feed = {"x:0": [1.0, 2.0], "flag:0": True}
            np.testing.assert_allclose(session.run([y2, grad2], feed), [[3, 6], [3, 3]])
            feed["flag:0"] = False
            np.testing.assert_allclose(session.run([y2, grad2], feed), [[-2, -1], [1, 1]])


def test_cond_runs_in_a_two_device_session():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float64, [3])
            w = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float64, name="w")
        with tf.device("/cpu:1"):
            flag = tf.placeholder(tf.bool, [])
            y = tf.cond(flag, lambda: tf.reduce_sum(x * w), lambda: tf.reduce_sum(x))
            grad = tf.gradients(y, [x, w])
        values = _run([y] + grad, {x: [1.0, 1.0, 2.0], flag: True}, config)
        np.testing.assert_allclose(values[0], 9.0)
        np.testing.assert_allclose(values[1], [1.0, 2.0, 3.0])
        np.testing.assert_allclose(values[2], [1.0, 1.0, 2.0])


def test_get_variable_in_both_branches_shares_one_store():
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, [])

        def branch(scale):
            def build():
                with tf.variable_scope("shared", reuse=tf.AUTO_REUSE):
                    w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))
                return w * scale
            return build

        y = tf.cond(flag, branch(1.0), branch(10.0))
        assert [v.name for v in tf.global_variables()] == ["shared/w:0"]
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            assert session.run(y, {flag: True}) == 2.0
            assert session.run(y, {flag: False}) == 20.0


def test_second_order_gradient_through_a_cond():
    rng = np.random.default_rng(8)
    gradient_checker.check_gradients(
        lambda x: tf.cond(tf.constant(True), lambda: tf.sin(x) * x, lambda: x),
        [rng.normal(size=3)], order=2)


def test_print_in_a_branch_prints_only_when_taken(capsys):
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, [])
        op = tf.cond(flag, lambda: tf.print("taken branch"), lambda: tf.no_op())
        with tf.Session() as session:
            session.run(op, {flag: False})
            assert capsys.readouterr().err == ""
            session.run(op, {flag: True})
            assert capsys.readouterr().err == "taken branch\n"


def test_imported_under_a_scope_a_branch_still_assigns_its_variable():
    with tf.Graph().as_default() as graph:
        v = tf.Variable(1.0, name="v")
        flag = tf.placeholder(tf.bool, [], name="flag")
        tf.cond(flag, lambda: tf.cond(flag, lambda: tf.assign_add(v, 1.0), lambda: v * 1.0),
                lambda: v.read_value(), name="y")
        data = graph.as_graph_def().SerializeToString()
    with tf.Graph().as_default():
        tf.import_graph_def(tf.GraphDef.FromString(data), name="copy")
        with tf.Session() as session:
            session.run("copy/v/Assign")
            assert session.run("copy/y:0", {"copy/flag:0": True}) == 2.0
            assert session.run("copy/v:0") == 2.0
            assert session.run("copy/y:0", {"copy/flag:0": False}) == 2.0


@pytest.mark.parametrize("x", [[0.3, -0.2], [-0.3, -0.2]])
def test_gradient_through_case(x):
    def pick(x, w):
        total = tf.reduce_sum(x)
        return tf.case([(total > 0, lambda: x * w), (total < -5, lambda: x)],
                       default=lambda: tf.tanh(x * w))

    gradient_checker.check_gradients(pick, [np.array(x), np.array(1.5)])
