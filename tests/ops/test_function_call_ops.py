"""tf.function / wrap_function in graph mode, tf.CriticalSection and
tf.variable_creator_scope: traces per signature, variables on the first trace only, values
and gradients (numerically checked) through the call ops."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker

COVERED_OP_TYPES = {"PartitionedCall", "StatefulPartitionedCall", "CriticalSectionExecute"}


def test_traces_once_per_signature_and_calls_the_body():
    traces = []

    @tf.function
    def affine(x, scale=2.0):
        traces.append(x.shape.as_list())
        return {"y": x * scale + 1.0, "sum": tf.reduce_sum(x)}

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        first, again = affine(x), affine(x * 2)
        other_shape = affine(tf.constant([[1.0, 2.0]]))
        other_value = affine(x, scale=3.0)
        assert first["y"].op.type == "PartitionedCall"
        assert traces == [[3], [1, 2], [3]] and affine.experimental_get_tracing_count() == 3
        with tf.Session() as sess:
            got = sess.run([first, again, other_shape, other_value], {x: [1.0, 2.0, 3.0]})
    np.testing.assert_allclose(got[0]["y"], [3, 5, 7])
    np.testing.assert_allclose(got[1]["y"], [5, 9, 13])
    np.testing.assert_allclose(got[2]["y"], [[3, 5]])
    np.testing.assert_allclose(got[3]["y"], [4, 7, 10])
    assert got[0]["sum"] == 6


def test_input_signature_concrete_function_and_bad_arguments():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def norm(x):
        return tf.sqrt(tf.reduce_sum(x * x, axis=1))

    with tf.Graph().as_default():
        concrete = norm.get_concrete_function()
        assert concrete.inputs[0].shape.as_list() == [None, 2]
        a = norm([[3.0, 4.0]])
        b = norm(np.array([[6.0, 8.0], [0.0, 1.0]], np.float32))
        c = concrete(tf.constant([[5.0, 12.0]]))
        assert norm.experimental_get_tracing_count() == 1
        with pytest.raises(ValueError, match="input_signature"):
            norm(tf.constant([[1.0, 2.0, 3.0]]))
        with tf.Session() as sess:
            got = sess.run([a, b, c])
    np.testing.assert_allclose(got[0], [5])
    np.testing.assert_allclose(got[1], [10, 1])
    np.testing.assert_allclose(got[2], [13])


def test_variables_on_first_trace_only_and_effects_always_run():
    class Counter:
        def __init__(self):
            self.v = None

        @tf.function
        def bump(self, step):
            if self.v is None:
                self.v = tf.Variable(10.0, name="counter")
            return self.v.assign_add(step)

    @tf.function
    def makes_a_variable(x):
        return tf.Variable(2.0, name="fresh") * x

    with tf.Graph().as_default():
        counter = Counter()
        first = counter.bump(tf.constant(1.0))
        second = counter.bump(tf.constant([2.0, 2.0])[0])  # same signature: no new trace
        makes_a_variable(tf.constant(1.0))
        with pytest.raises(ValueError, match="not its first trace"):
            makes_a_variable(tf.constant([1.0, 2.0]))
        assert first.op.type == "StatefulPartitionedCall"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(first) == 11.0
            assert sess.run(second) == 13.0
            assert sess.run(counter.v) == 13.0


def test_gradients_through_a_call_reach_arguments_and_captured_variables():
    with tf.Graph().as_default():
        w = tf.Variable([[0.5, -1.0], [2.0, 0.25]], dtype=tf.float64)

        @tf.function
        def layer(x):
            return tf.tanh(tf.matmul(x, w)) * x

        x = tf.placeholder(tf.float64, [3, 2])
        loss = tf.reduce_sum(layer(x) ** 2)
        grad_w = tf.gradients(loss, w)[0]
        rng = np.random.default_rng(3)
        x_value = rng.normal(size=(3, 2))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w_value = sess.run(w)
            got_w = sess.run(grad_w, {x: x_value})
    def reference(w_arr):
        return np.sum((np.tanh(x_value @ w_arr) * x_value) ** 2)
    numeric = np.zeros_like(w_value)
    for index in np.ndindex(w_value.shape):
        step = np.zeros_like(w_value)
        step[index] = 1e-6
        numeric[index] = (reference(w_value + step) - reference(w_value - step)) / 2e-6
    np.testing.assert_allclose(got_w, numeric, rtol=1e-6, atol=1e-8)

    def through_call(x):
        return tf.function(lambda t: tf.sin(t) * t)(x)
    gradient_checker.check_gradients(through_call, [np.linspace(-1, 1, 5)])


def test_wrap_function_traces_once_over_a_signature():
    with tf.Graph().as_default():
        wrapped = tf.compat.v1.wrap_function(
            lambda a, b: tf.matmul(a, b) + 1.0,
            [tf.TensorSpec([2, 2], tf.float32), tf.TensorSpec([2, 1], tf.float32)])
        out = wrapped(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([[1.0], [1.0]]))
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out), [[4.0], [8.0]])
        with pytest.raises(TypeError, match="takes 2"):
            wrapped(tf.constant([[1.0]]))


def test_critical_section_serialises_executions():
    inside, most = [0], [0]
    lock = threading.Lock()

    def enter(x):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.02)
        with lock:
            inside[0] -= 1
        return x

    def measure(use_section):
        inside[0] = most[0] = 0
        with tf.Graph().as_default():
            section = tf.CriticalSection(name="cs")
            v = tf.Variable(0.0)

            def body():
                value = tf.py_func(enter, [v.read_value()], tf.float32)
                return v.assign(value + 1.0)
            update = section.execute(body) if use_section else body()
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                threads = [threading.Thread(target=lambda: [sess.run(update) for _ in range(3)])
                           for _ in range(4)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(timeout=30)
                return most[0], sess.run(v)
    most_inside, total = measure(True)
    assert most_inside == 1 and total == 12.0  # no lost update
    assert measure(False)[0] > 1  # the same program without the section does overlap


def test_variable_creator_scope_sees_and_changes_every_variable():
    seen = []

    def untrainable(next_creator, **kwargs):
        seen.append(kwargs.get("name"))
        kwargs["trainable"] = False
        return next_creator(**kwargs)

    def renamed(next_creator, **kwargs):
        kwargs["name"] = "renamed_" + kwargs.get("name", "v")
        return next_creator(**kwargs)

    with tf.Graph().as_default():
        with tf.variable_creator_scope(untrainable), tf.variable_creator_scope(renamed):
            v = tf.Variable(1.0, True, name="w")
        plain = tf.Variable(2.0, name="plain")
        assert seen == ["renamed_w"] and v.op.name == "renamed_w"
        assert tf.trainable_variables() == [plain]


def test_prune_cuts_a_wrapped_v1_graph_to_one_signature():
    def v1_model(x):
        hidden = tf.nn.relu(x * 2.0, name="hidden")
        return tf.reduce_sum(hidden, name="total")

    with tf.Graph().as_default():
        offset = tf.constant(10.0)
        wrapped = tf.compat.v1.wrap_function(lambda x: v1_model(x) + offset,
                                             [tf.TensorSpec([3], tf.float32)])
        hidden_only = wrapped.prune(feeds=wrapped.inputs[0], fetches="hidden:0")
        from_hidden = wrapped.prune(feeds=["hidden:0"], fetches=[wrapped.outputs[0]])
        a = hidden_only(tf.constant([1.0, -2.0, 3.0]))
        b = from_hidden(tf.constant([1.0, 1.0, 1.0]))
        with tf.Session() as sess:
            got_a, got_b = sess.run([a, b])
    np.testing.assert_allclose(got_a, [2.0, 0.0, 6.0])
    np.testing.assert_allclose(got_b, [13.0])  # fed at the cut: 3 + the captured offset


def test_nested_functions_share_variable_collections_and_differentiate():
    @tf.function
    def inner(x):
        return x * 3.0

    @tf.function
    def outer(x):
        return inner(x) + inner(x * 2.0), len(tf.trainable_variables())

    with tf.Graph().as_default():
        tf.Variable(1.0, name="seen_inside")
        x = tf.constant(2.0)
        y, count = outer(x)
        grad = tf.gradients(y, x)[0]
        assert count == 1  # the body sees the enclosing graph's variables, as in TF
        with tf.Session() as sess:
            assert sess.run([y, grad]) == [18.0, 9.0]


def test_a_call_gradient_differentiates_only_the_inputs_the_walk_needs():
    with tf.Graph().as_default():
        w = tf.Variable([2.0, 3.0])
        x = tf.placeholder(tf.float32, [2])
        y = tf.function(lambda t: tf.reduce_sum(t * w))(x)
        (grad_w,) = tf.gradients(y, [w])
        grad_calls = [op for op in tf.get_default_graph().get_operations()
                      if op.type == "StatefulPartitionedCall"]
        assert [len(op.outputs) for op in grad_calls] == [1]  # w's read only, not x
        (grad_x,) = tf.gradients(y, [x])
        with tf.Session() as sess:
            sess.run(w.initializer)
            got_w, got_x = sess.run([grad_w, grad_x], {x: [5.0, 7.0]})
    assert got_w.tolist() == [5.0, 7.0] and got_x.tolist() == [2.0, 3.0]


def test_relaxed_shapes_share_one_trace_per_rank():
    traces = []

    @tf.function(experimental_relax_shapes=True)
    def total(x):
        traces.append(x.shape.as_list())
        return tf.reduce_sum(x)

    class Unhashable:
        __hash__ = None

        @tf.function
        def twice(self, x):
            return x * 2.0

    with tf.Graph().as_default():
        sums = [total(tf.ones([n])) for n in (2, 3, 4, 3)] + [total(tf.ones([2, 2]))]
        assert traces == [[2], [None], [2, 2]]
        holder = Unhashable()
        doubled = [holder.twice(tf.constant(1.0)) for _ in range(2)]
        assert doubled[0].op.get_attr("f") is doubled[1].op.get_attr("f")  # one trace
        with tf.Session() as sess:
            assert sess.run(sums + doubled) == [2.0, 3.0, 4.0, 3.0, 4.0, 2.0, 2.0]
