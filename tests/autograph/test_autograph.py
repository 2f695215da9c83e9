"""tf.autograph: tensor-dependent if/while/for and boolean operators become cond/while_loop,
Python-valued ones stay Python; values against NumPy, gradients checked numerically."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def collatz_steps(n):
    steps = 0
    while n > 1:
        if tf.equal(n % 2, 0):
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def clipped_sign(x):
    if tf.reduce_sum(x) > 0:
        return x * 2.0
    return -x


def running_sum(values):
    total = 0.0
    squares = []
    for value in values:
        scaled = value * 0.5
        total = total + scaled
    return total, squares


def test_while_and_if_on_tensors_become_graph_control_flow():
    converted = tf.autograph.to_graph(collatz_steps)
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        steps = converted(n)
        ops = {op.type for op in tf.get_default_graph().get_operations()}
        assert "While" in ops
        got = [_run(steps, {n: value}) for value in (1, 6, 27)]
    assert got == [0, 8, 111]


def test_python_conditions_stay_python():
    branches = []

    def pick(flag, x):
        if flag:
            branches.append("then")
            y = x + 1.0
        else:
            branches.append("else")
            y = x - 1.0
        count = 0
        while count < 3:  # a Python loop: unrolled while tracing
            y = y * 2.0
            count += 1
        return y

    with tf.Graph().as_default():
        y = tf.autograph.to_graph(pick)(True, tf.constant(1.0))
        assert branches == ["then"]
        assert not {"If", "While"} & {op.type for op in tf.get_default_graph().get_operations()}
        assert _run(y) == 16.0


def test_returns_in_branches_and_temporaries_in_one_branch():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        y = tf.function(clipped_sign)(x)
        assert _run(y, {x: [1.0, 2.0, -1.0]}).tolist() == [2.0, 4.0, -2.0]
        assert _run(y, {x: [-1.0, -2.0, 1.0]}).tolist() == [1.0, 2.0, -1.0]
    source = tf.autograph.to_code(clipped_sign)
    assert "ag__.if_stmt" in source and "retval__" in source


def test_for_over_a_tensor_and_over_a_python_list():
    with tf.Graph().as_default():
        values = tf.placeholder(tf.float32, [None])
        total, _ = tf.autograph.to_graph(running_sum)(values)
        python_total, _ = tf.autograph.to_graph(running_sum)([1.0, 2.0, tf.constant(3.0)])
        data = np.array([1.0, 4.0, 9.0, 16.0], np.float32)
        got, got_python = _run([total, python_total], {values: data})
    assert got == pytest.approx(data.sum() * 0.5) and got_python == pytest.approx(3.0)


def test_boolean_operators_and_calls_of_user_functions_are_converted():
    def in_band(x, low, high):
        return x > low and not x > high

    def classify(x):
        if in_band(x, 0.0, 1.0) or tf.equal(x, 5.0):
            label = 1
        else:
            label = 0
        return label

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        label = tf.autograph.to_graph(classify)(x)
        got = [_run(label, {x: v}) for v in (0.5, 2.0, 5.0, -1.0)]
    assert got == [1, 0, 1, 0]
    assert tf.autograph.to_graph(classify)(0.5) == 1  # all-Python still works


def test_do_not_convert_set_loop_options_and_undefined_branch_variables():
    @tf.autograph.do_not_convert
    def raw(x):
        if x > 0:
            return x
        return -x

    def one_sided(x):
        if x > 0:
            y = x
        return y

    def limited(x):
        while x < 100.0:
            tf.autograph.experimental.set_loop_options(maximum_iterations=3)
            x = x * 2.0
        return x

    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Python bool"):
            tf.autograph.to_graph(raw)(tf.constant(1.0))
        with pytest.raises(ValueError, match="'y' must be defined"):
            tf.autograph.to_graph(one_sided)(tf.constant(1.0))
        assert _run(tf.autograph.to_graph(limited)(tf.constant(1.0))) == 8.0


def test_gradients_flow_through_converted_control_flow():
    def power_until(x):
        y = x
        steps = 0
        while tf.reduce_max(tf.abs(y)) < 5.0:
            y = y * x
            steps += 1
        if tf.reduce_sum(y) > 0:
            y = tf.sin(y)
        else:
            y = y * y
        return y

    converted = tf.autograph.to_graph(power_until)
    gradient_checker.check_gradients(converted, [np.array([1.7, -1.3])])
    gradient_checker.check_gradients(converted, [np.array([-1.9, 1.2])])


def test_tf_function_converts_by_default_and_not_when_told():
    def absolute(x):
        if x >= 0:
            return x
        return -x

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.function(absolute)(x)
        assert [_run(y, {x: v}) for v in (-2.0, 3.0)] == [2.0, 3.0]
        with pytest.raises(TypeError, match="Python bool"):
            tf.function(absolute, autograph=False)(x)


def first_power_above(x, limit):
    power = x
    steps = 0
    while True:
        if power > limit:
            break
        power = power * x
        steps += 1
    return power, steps


def sum_of_odd_items(values):
    total = 0.0
    for value in values:
        if tf.equal(tf.math.floormod(value, 2.0), 0.0):
            continue
        total = total + value
    return total


def test_break_and_continue_become_flags_in_graph_loops():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        power, steps = tf.autograph.to_graph(first_power_above)(x, 100.0)
        values = tf.placeholder(tf.float32, [None])
        odd_total = tf.autograph.to_graph(sum_of_odd_items)(values)
        assert "While" in {op.type for op in tf.get_default_graph().get_operations()}
        with tf.Session() as sess:
            assert sess.run([power, steps], {x: 3.0}) == [243.0, 4]
            assert sess.run(odd_total, {values: [1.0, 2.0, 3.0, 4.0, 7.0]}) == 11.0
    assert tf.autograph.to_graph(first_power_above)(2, 10) == (16, 3)  # Python values
    source = tf.autograph.to_code(first_power_above)
    assert "break_" in source and "break" not in source.replace("break_", "")


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def apply(self, x):
        if tf.reduce_sum(x) > 0:
            return x * self.factor
        return x


def test_methods_trace_and_unconvertible_code(capsys):
    with tf.Graph().as_default():
        scaled = tf.autograph.to_graph(Scaler(3.0).apply)(tf.constant([1.0, 2.0]))
        tf.autograph.trace("traced", 7)
        assert _run(scaled).tolist() == [3.0, 6.0]
    assert "traced 7" in capsys.readouterr().out
    namespace = {}
    exec("def made_by_exec(x):\n    return x + 1\n", namespace)  # no source file to read
    with pytest.raises(OSError):
        tf.autograph.to_graph(namespace["made_by_exec"])
    tf.autograph.set_verbosity(0)
