"""Control-flow ops of the foundation: NoOp, tf.group, tf.tuple and with_dependencies, checked
through their ordering guarantees (side effects of assign ops tell what ran, and when)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import control_flow_ops

COVERED_OP_TYPES = {"NoOp"}


def _counter(name):
    var = tf.Variable(0, name=name)
    return var, tf.assign_add(var, 1)


def test_no_op_runs_and_returns_none():
    with tf.Graph().as_default():
        op = tf.no_op(name="nothing")
        assert op.type == "NoOp" and op.name == "nothing" and op.outputs == []
        with tf.Session() as session:
            assert session.run(op) is None
            assert session.run([op, tf.constant(3)]) == [None, 3]


def test_group_runs_all_of_its_inputs_once():
    with tf.Graph().as_default():
        first, bump_first = _counter("first")
        second, bump_second = _counter("second")
        both = tf.group(bump_first, bump_second.op, name="both")
        assert both.type == "NoOp"
        assert {op.name for op in both.control_inputs} == {bump_first.op.name,
                                                           bump_second.op.name}
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(both)
            session.run(both)
            assert session.run([first, second]) == [2, 2]


def test_group_accepts_nested_structures_and_skips_none():
    with tf.Graph().as_default():
        counters = [_counter(f"c{i}") for i in range(4)]
        bumps = [bump for _, bump in counters]
        grouped = tf.group([bumps[0], [bumps[1], None]], {"x": bumps[2], "y": bumps[3].op})
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(grouped)
            assert session.run([var for var, _ in counters]) == [1, 1, 1, 1]


def test_group_rejects_values_that_are_not_graph_elements():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Tensor or Operation"):
            tf.group(3)


def test_tuple_outputs_wait_for_every_input():
    with tf.Graph().as_default():
        count, bump = _counter("count")
        value = tf.constant(5.0)
        gated_value, gated_bump = tf.tuple([value, bump])
        with tf.Session() as session:
            session.run(count.initializer)
            # Fetching only the first output still runs the bump: the tuple is a barrier.
            assert session.run(gated_value) == 5.0
            assert session.run(count) == 1
            assert session.run(gated_bump) == 2


def test_tuple_keeps_none_and_extra_control_inputs():
    with tf.Graph().as_default():
        count, bump = _counter("count")
        x = tf.constant([1.0, 2.0])
        gated = tf.tuple([x, None], control_inputs=[bump.op])
        assert gated[1] is None
        with tf.Session() as session:
            session.run(count.initializer)
            np.testing.assert_array_equal(session.run(gated[0]), [1.0, 2.0])
            assert session.run(count) == 1


def test_with_dependencies_reads_after_the_update():
    with tf.Graph().as_default():
        var = tf.Variable(1.0)
        update = tf.assign(var, 10.0)
        read = control_flow_ops.with_dependencies([update], var.read_value())
        with tf.Session() as session:
            session.run(var.initializer)
            assert session.run(read) == 10.0


def test_control_dependencies_order_a_read_after_an_update():
    with tf.Graph().as_default():
        var = tf.Variable(0.0)
        increment = tf.assign_add(var, 1.0)
        with tf.control_dependencies([increment]):
            after = tf.identity(var)
            marker = tf.no_op()
        with tf.Session() as session:
            session.run(var.initializer)
            assert session.run(after) == 1.0
            assert session.run(after) == 2.0
            session.run(marker)
            assert session.run(var) == 3.0


def test_group_of_groups_runs_the_inner_updates():
    with tf.Graph().as_default():
        count, bump = _counter("count")
        inner = tf.group(bump)
        outer = tf.group(inner, tf.no_op())
        with tf.Session() as session:
            session.run(count.initializer)
            session.run(outer)
            assert session.run(count) == 1
