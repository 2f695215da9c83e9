"""Session.run: fetch structures, feeds, plan caching, errors, tracing."""
import collections

import numpy as np
import pytest

import tensorweave as tf


def test_nested_fetch_structures_come_back_in_the_same_shape():
    a = tf.constant(1.0)
    b = tf.constant([2, 3])
    c = tf.constant("s")
    Pair = collections.namedtuple("Pair", ["first", "second"])
    with tf.Session() as sess:
        out = sess.run({"a": a, "nested": [b, (a, c)], "pair": Pair(a, b), "op": tf.no_op()})
    assert out["a"] == 1.0
    np.testing.assert_array_equal(out["nested"][0], [2, 3])
    assert isinstance(out["nested"][1], tuple) and out["nested"][1][1] == b"s"
    assert isinstance(out["pair"], Pair) and out["pair"].first == 1.0
    assert out["op"] is None


def test_fetch_by_name_and_feed_by_name():
    x = tf.placeholder(tf.float32, [2], name="x")
    tf.multiply(x, 3.0, name="y")
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run("y:0", {"x:0": [1, 2]}), [3, 6])
        assert sess.run("y", {"x:0": [1, 2]}) is None  # an op name fetches the op


def test_any_tensor_can_be_fed_not_only_placeholders():
    a = tf.constant(2.0)
    b = a * 10.0
    with tf.Session() as sess:
        assert sess.run(b) == 20.0
        assert sess.run(b, {a: 5.0}) == 50.0


def test_plan_is_cached_per_feeds_fetches_targets():
    x = tf.placeholder(tf.float32, [None])
    y = x * 2.0
    z = y + 1.0
    with tf.Session() as sess:
        for i in range(5):
            sess.run(y, {x: [float(i)]})
        assert sess.num_plans_built == 1
        sess.run([y], {x: [1.0]})  # same elements in another structure: same plan
        assert sess.num_plans_built == 1
        sess.run(z, {x: [1.0]})
        assert sess.num_plans_built == 2
        sess.run(z, {y: [1.0]})  # a different feed set re-plans
        assert sess.num_plans_built == 3
        sess.run(z, {y: [3.0]})
        assert sess.num_plans_built == 3


def test_fed_tensor_prunes_its_producers():
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0  # if this ran, the unfed placeholder would fail
    z = y + 1.0
    with tf.Session() as sess:
        assert sess.run(z, {y: 4.0}) == 5.0


def test_unfed_placeholder_error_names_it_and_the_line_that_made_it():
    x = tf.placeholder(tf.float32, [2], name="images")
    y = x + 1.0
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y)
    assert "images" in str(info.value)
    assert "test_session.py" in str(info.value)
    assert info.value.op.name == "images"


def test_feed_shape_and_dtype_are_checked():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    n = tf.placeholder(tf.int32, [], name="n")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor x:0"):
            sess.run(x, {x: [1.0, 2.0, 3.0]})
        with pytest.raises(TypeError, match="n:0"):
            sess.run(n, {n: 2 ** 40})  # a Python int the int32 tensor cannot hold
        np.testing.assert_array_equal(sess.run(x, {x: np.ones((1, 2), np.float64)}),
                                      [[1.0, 1.0]])
        assert sess.run(x, {x: [[1, 2]]}).dtype == np.float32


def test_non_feedable_tensor_and_foreign_graph_fetch_are_rejected():
    x = tf.constant(1.0, name="c")
    tf.get_default_graph().prevent_feeding(x)
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(2.0, name="foreign")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="c:0 may not be fed"):
            sess.run(x, {x: 3.0})
        with pytest.raises(ValueError, match="foreign"):
            sess.run(foreign)
        with pytest.raises(TypeError, match="feed"):
            sess.run(x + 1.0, {x + 0.0: tf.constant(1.0)})


def test_closed_session_refuses_to_run():
    sess = tf.Session()
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(tf.constant(1))


def test_fetch_none_is_a_type_error():
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="None"):
            sess.run(None)


def test_eval_and_run_use_the_default_session():
    v = tf.Variable(3.0)
    doubled = v * 2.0
    with tf.Session() as sess:
        v.initializer.run()
        assert doubled.eval() == 6.0
        assert doubled.eval(feed_dict={v.value(): 10.0}) == 20.0
    with pytest.raises(ValueError, match="default session"):
        doubled.eval()


def test_interactive_session_installs_itself_as_default():
    c = tf.constant(7)
    sess = tf.InteractiveSession()
    try:
        assert c.eval() == 7
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_make_callable_runs_the_cached_plan_with_positional_feeds():
    x = tf.placeholder(tf.float32, [None])
    y = tf.reduce_sum(x * x)
    with tf.Session() as sess:
        run = sess.make_callable([y, y * 2.0], feed_list=[x])
        assert run(np.array([1.0, 2.0], np.float32)) == [5.0, 10.0]
        assert run([3.0]) == [9.0, 18.0]
        with pytest.raises(TypeError, match="1 feed"):
            run()


def test_fetched_variable_value_is_a_snapshot_not_a_live_reference():
    v = tf.Variable([1.0, 2.0])
    bump = v.assign_add([1.0, 1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        sess.run(bump)
        np.testing.assert_array_equal(before, [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(v), [2.0, 3.0])


def test_full_trace_fills_step_stats_for_every_op():
    x = tf.constant(np.ones((4, 4), np.float32))
    y = tf.matmul(x, x, name="product")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(y, options=options, run_metadata=metadata)
    stats = [node for dev in metadata.step_stats.dev_stats for node in dev["node_stats"]]
    names = {node["op"] for node in stats}
    assert "product" in names
    product = next(node for node in stats if node["op"] == "product")
    assert product["output_bytes"] == 64 and product["duration_s"] >= 0


def test_config_proto_accepts_usual_fields_and_rejects_unknown_ones():
    config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                            inter_op_parallelism_threads=2,
                            gpu_options=tf.GPUOptions(allow_growth=True))
    config.gpu_options.allow_growth = True
    with tf.Session(config=config) as sess:
        assert sess.run(tf.constant(1)) == 1
    with pytest.raises(TypeError, match="no field 'alow_soft_placement'"):
        tf.ConfigProto(alow_soft_placement=True)


def test_kernel_error_is_an_op_error_naming_op_type_and_location():
    x = tf.placeholder(tf.float32, [None])
    reshaped = tf.reshape(x, [2, 2], name="to_square")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(reshaped, {x: [1.0, 2.0, 3.0]})
    message = str(info.value)
    assert "to_square" in message and "Reshape" in message and "test_session.py" in message


def test_unsupported_target_is_a_clear_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not supported"):
        tf.Session("carrier-pigeon://loft:1")


def test_separate_sessions_have_separate_variables():
    v = tf.Variable(1.0)
    inc = v.assign_add(1.0)
    with tf.Session() as first, tf.Session() as second:
        first.run(v.initializer)
        first.run(inc)
        second.run(v.initializer)
        assert first.run(v) == 2.0 and second.run(v) == 1.0


def test_list_devices_names_the_local_cpu():
    with tf.Session() as sess:
        names = [d.name for d in sess.list_devices()]
    assert names == ["/job:localhost/replica:0/task:0/device:CPU:0"]
