"""Graph, Operation and Tensor: default graphs, names, scopes, dependencies, devices,
colocation, collections, lookups and finalization."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import graph as graph_lib


# --- the default graph stack ---------------------------------------------------------------------
def test_as_default_nests_and_restores(graph):
    assert tf.get_default_graph() is graph
    inner = tf.Graph()
    with inner.as_default() as entered:
        assert entered is inner and tf.get_default_graph() is inner
        c = tf.constant(1.0)
        assert c.graph is inner
    assert tf.get_default_graph() is graph
    assert graph.get_operations() == []
    assert inner.get_operations() == [c.op]


@pytest.mark.no_default_graph
def test_reset_default_graph_replaces_the_global_graph():
    tf.reset_default_graph()
    before = tf.get_default_graph()
    tf.constant(1.0, name="leftover")
    assert tf.get_default_graph() is before
    tf.reset_default_graph()
    after = tf.get_default_graph()
    assert after is not before and after.get_operations() == []
    with tf.Graph().as_default():
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    tf.reset_default_graph()


def test_default_graph_stack_is_per_thread(graph):
    seen = {}

    def worker():
        seen["graph"] = tf.get_default_graph()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["graph"] is not graph


# --- op names and name scopes --------------------------------------------------------------------
def test_op_names_are_made_unique(graph):
    names = [tf.constant(0, name="x").op.name for _ in range(3)]
    assert names == ["x", "x_1", "x_2"]
    assert tf.constant(0, name="x_1").op.name == "x_1_1"
    assert tf.constant(0).op.name == "Const"
    assert tf.constant(0).op.name == "Const_1"


def test_op_names_clash_case_insensitively(graph):
    assert tf.constant(0, name="Foo").op.name == "Foo"
    assert tf.constant(0, name="foo").op.name == "foo_1"


def test_invalid_op_name_is_rejected(graph):
    with pytest.raises(ValueError):
        tf.constant(0, name="_starts_with_underscore")
    with pytest.raises(ValueError):
        tf.constant(0, name="has space")


def test_name_scopes_nest_and_are_made_unique(graph):
    with tf.name_scope("outer") as outer:
        assert outer == "outer/"
        with tf.name_scope("inner") as inner:
            assert inner == "outer/inner/"
            assert tf.constant(1).op.name == "outer/inner/Const"
            assert graph.get_name_scope() == "outer/inner"
        assert tf.constant(1, name="c").op.name == "outer/c"
    with tf.name_scope("outer") as again:
        assert again == "outer_1/"
    assert graph.get_name_scope() == ""


def test_name_scope_clashes_with_op_names(graph):
    tf.constant(0, name="layer")
    with tf.name_scope("layer") as scope:
        assert scope == "layer_1/"


def test_name_scope_reentry_with_trailing_slash(graph):
    with tf.name_scope("block") as scope:
        tf.constant(0, name="a")
    with tf.name_scope("elsewhere"):
        with tf.name_scope(scope) as reentered:
            assert reentered == "block/"
            assert tf.constant(0, name="b").op.name == "block/b"
            assert tf.constant(0, name="a").op.name == "block/a_1"


def test_name_scope_none_or_empty_resets_to_the_root(graph):
    with tf.name_scope("a"):
        with tf.name_scope(None) as root:
            assert root == ""
            assert tf.constant(0, name="top").op.name == "top"
        with tf.name_scope(""):
            assert graph.get_name_scope() == ""


def test_name_scope_default_name_and_values_graph(graph):
    with tf.name_scope(None, default_name="fallback") as scope:
        assert scope == "fallback/"
    other = tf.Graph()
    with other.as_default():
        value = tf.constant(1.0)
    # Values from another graph make that graph the default inside the scope.
    with tf.name_scope("s", values=[value]) as scope:
        assert tf.get_default_graph() is other
        assert tf.constant(2.0).graph is other
    assert tf.get_default_graph() is graph


def test_unique_name_without_marking(graph):
    assert graph.unique_name("w", mark_as_used=False) == "w"
    assert graph.unique_name("w", mark_as_used=False) == "w"
    assert graph.unique_name("w") == "w"
    assert graph.unique_name("w") == "w_1"


def test_invalid_scope_name_is_rejected(graph):
    with pytest.raises(ValueError):
        with tf.name_scope("bad name"):
            pass


# --- control dependencies ------------------------------------------------------------------------
def test_control_dependencies_record_control_inputs(graph):
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a, b.op]):
        c = tf.constant(3.0, name="c")
    assert set(c.op.control_inputs) == {a.op, b.op}
    assert c.op in a.op._control_outputs
    d = tf.constant(4.0, name="d")
    assert d.op.control_inputs == []


def test_control_dependencies_nest_and_none_clears(graph):
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        with tf.control_dependencies([b]):
            both = tf.constant(0.0, name="both")
        with tf.control_dependencies(None):
            cleared = tf.constant(0.0, name="cleared")
            with tf.control_dependencies([b]):
                only_b = tf.constant(0.0, name="only_b")
        only_a = tf.constant(0.0, name="only_a")
    assert set(both.op.control_inputs) == {a.op, b.op}
    assert cleared.op.control_inputs == []
    assert only_b.op.control_inputs == [b.op]
    assert only_a.op.control_inputs == [a.op]


def test_control_dependency_on_a_data_input_is_not_duplicated(graph):
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        b = tf.identity(a)
    assert b.op.control_inputs == []


def test_control_dependencies_reject_non_graph_elements(graph):
    with pytest.raises(TypeError):
        with tf.control_dependencies([42]):
            pass


def test_control_dependencies_order_execution(graph):
    counter = tf.Variable(0, name="counter")
    increment = tf.assign_add(counter, 1)
    with tf.control_dependencies([increment]):
        marker = tf.constant(7, name="marker")
    with tf.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(marker) == 7
        assert sess.run(marker) == 7
        assert sess.run(counter) == 2


# --- devices -------------------------------------------------------------------------------------
def test_device_strings_nest_inner_wins_outer_fills(graph):
    with tf.device("/job:ps/task:1"):
        a = tf.constant(0, name="a")
        with tf.device("/cpu:0"):
            b = tf.constant(0, name="b")
            with tf.device("/job:worker/gpu:1"):
                c = tf.constant(0, name="c")
        with tf.device(None):
            d = tf.constant(0, name="d")
        with tf.device(""):
            e = tf.constant(0, name="e")
    f = tf.constant(0, name="f")
    assert a.device == "/job:ps/task:1"
    assert b.device == "/job:ps/task:1/device:CPU:0"
    assert c.device == "/job:worker/task:1/device:GPU:1"
    assert d.device == ""
    assert e.device == "/job:ps/task:1"
    assert f.device == ""
    assert a.op.device == a.device


def test_device_accepts_device_spec(graph):
    with tf.device(tf.DeviceSpec(job="ps", task=2, device_type="CPU", device_index=0)):
        assert tf.constant(0).device == "/job:ps/task:2/device:CPU:0"


def test_device_function_sees_op_and_inner_device(graph):
    calls = []

    def by_type(op):
        calls.append((op.type, op.device))
        return "/job:ps/task:0" if op.type == "VariableV2" else "/job:worker/task:3"

    with tf.device(by_type):
        const = tf.constant(0.0, name="const")
        with tf.device("/cpu:0"):
            inner = tf.constant(0.0, name="inner")
        var = tf.Variable(1.0, name="var")
    assert const.device == "/job:worker/task:3"
    # Applied innermost first: the function sees the inner scope's device, its result wins.
    assert ("Const", "/device:CPU:0") in calls
    assert inner.device == "/job:worker/task:3"
    assert var.device == "/job:ps/task:0"


def test_device_function_inside_string_scope_is_filled_by_it(graph):
    with tf.device("/job:worker/task:0/cpu:0"):
        with tf.device(lambda op: "/gpu:1"):
            a = tf.constant(0.0)
        with tf.device(lambda op: None):
            b = tf.constant(0.0)
    assert a.device == "/job:worker/task:0/device:GPU:1"
    assert b.device == "/job:worker/task:0/device:CPU:0"


def test_merging_device_function_keeps_inner_fields(graph):
    """The replica_device_setter pattern: a function that fills only what the op leaves unset."""
    def to_parameter_server(op):
        spec = tf.DeviceSpec.from_string("/job:ps/task:0/device:CPU:0")
        return spec.merge_from(op.device)  # a DeviceSpec result is accepted too

    with tf.device(to_parameter_server):
        plain = tf.constant(0.0)
        with tf.device("/job:worker/gpu:1"):
            pinned = tf.constant(0.0)
    assert plain.device == "/job:ps/task:0/device:CPU:0"
    assert pinned.device == "/job:worker/task:0/device:GPU:1"


# --- colocation ----------------------------------------------------------------------------------
def test_colocate_with_sets_class_attr_and_copies_device(graph):
    with tf.device("/job:ps/task:0/cpu:0"):
        anchor = tf.constant(1.0, name="anchor")
    with tf.device("/job:worker/task:1"):
        with tf.colocate_with(anchor):
            follower = tf.identity(anchor, name="follower")
            with tf.device("/gpu:0"):
                still = tf.constant(2.0, name="still")
    assert follower.op.get_attr("_class") == ["loc:@anchor"]
    assert follower.device == "/job:ps/task:0/device:CPU:0"
    assert still.device == "/job:ps/task:0/device:CPU:0"
    assert follower.op.colocation_groups() == ["loc:@anchor"]
    assert anchor.op.colocation_groups() == ["loc:@anchor"]


def test_colocate_with_operation_nesting_and_ignore_existing(graph):
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.colocate_with(a.op):
        with tf.colocate_with(b):
            both = tf.constant(0.0, name="both")
        with tf.colocate_with(b, ignore_existing=True):
            only_b = tf.constant(0.0, name="only_b")
    assert both.op.get_attr("_class") == ["loc:@a", "loc:@b"]
    assert only_b.op.get_attr("_class") == ["loc:@b"]


def test_colocate_with_undevice_target_keeps_inner_device_scope(graph):
    a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        with tf.device("/cpu:0"):
            b = tf.constant(2.0, name="b")
    assert b.device == "/device:CPU:0"
    assert b.op.get_attr("_class") == ["loc:@a"]


def test_colocate_with_variable(graph):
    with tf.device("/job:ps/task:3"):
        var = tf.Variable(1.0, name="v")
    with tf.colocate_with(var):
        near = tf.constant(0.0, name="near")
    assert near.device == "/job:ps/task:3"
    assert near.op.get_attr("_class") == ["loc:@v"]
    # A variable's initializer and snapshot are colocated with it.
    assert var.initializer.get_attr("_class") == ["loc:@v"]
    assert var.value().op.get_attr("_class") == ["loc:@v"]


# --- collections ---------------------------------------------------------------------------------
def test_collections_add_get_and_copy_semantics(graph):
    tf.add_to_collection("things", 1)
    tf.add_to_collections(["things", "more"], 2)
    tf.add_to_collections("more", 3)
    assert tf.get_collection("things") == [1, 2]
    assert tf.get_collection("more") == [2, 3]
    assert tf.get_collection("missing") == []
    copy = tf.get_collection("things")
    copy.append(99)
    assert tf.get_collection("things") == [1, 2]
    ref = tf.get_collection_ref("things")
    ref.append(4)
    assert tf.get_collection("things") == [1, 2, 4]
    created = tf.get_collection_ref("fresh")
    created.append("x")
    assert tf.get_collection("fresh") == ["x"]
    assert set(graph.get_all_collection_keys()) >= {"things", "more", "fresh"}
    assert set(graph.collections) >= {"things", "more", "fresh"}
    graph.clear_collection("things")
    assert tf.get_collection("things") == []


def test_get_collection_scope_is_a_regex_matched_at_the_start(graph):
    with tf.name_scope("model"):
        a = tf.constant(0, name="a")
        with tf.name_scope("head"):
            b = tf.constant(0, name="b")
    c = tf.constant(0, name="modelx")
    for item in (a, b, c, "no name attribute"):
        tf.add_to_collection("items", item)
    assert tf.get_collection("items", scope="model/") == [a, b]
    assert tf.get_collection("items", scope="model") == [a, b, c]
    assert tf.get_collection("items", scope=r"model/h.*") == [b]
    assert tf.get_collection("items", scope="head") == []


def test_graph_keys_values():
    assert tf.GraphKeys.GLOBAL_VARIABLES == "variables"
    assert tf.GraphKeys.VARIABLES == tf.GraphKeys.GLOBAL_VARIABLES
    assert tf.GraphKeys.TRAINABLE_VARIABLES == "trainable_variables"
    assert tf.GraphKeys.LOCAL_VARIABLES == "local_variables"
    assert tf.GraphKeys.REGULARIZATION_LOSSES == "regularization_losses"


# --- lookups -------------------------------------------------------------------------------------
def test_get_tensor_and_operation_by_name(graph):
    c = tf.constant([1.0, 2.0], name="c")
    assert graph.get_tensor_by_name("c:0") is c
    assert graph.get_operation_by_name("c") is c.op
    with pytest.raises(KeyError, match="'nope'"):
        graph.get_tensor_by_name("nope:0")
    with pytest.raises(KeyError, match="only 1 output"):
        graph.get_tensor_by_name("c:1")
    with pytest.raises(ValueError, match="Operation name"):
        graph.get_tensor_by_name("c")
    with pytest.raises(ValueError, match="Tensor name"):
        graph.get_operation_by_name("c:0")
    with pytest.raises(KeyError, match="'missing'"):
        graph.get_operation_by_name("missing")


def test_as_graph_element(graph):
    c = tf.constant(1.0, name="c")
    var = tf.Variable(1.0, name="v")
    assert graph.as_graph_element(c) is c
    assert graph.as_graph_element(c.op) is c.op
    assert graph.as_graph_element("c:0") is c
    assert graph.as_graph_element("c") is c.op
    assert graph.as_graph_element(var) is var.op.outputs[0]
    with pytest.raises(ValueError):
        graph.as_graph_element("c:0", allow_tensor=False)
    with pytest.raises(ValueError):
        graph.as_graph_element("c", allow_operation=False)
    with pytest.raises(TypeError):
        graph.as_graph_element(c.op, allow_operation=False)
    with pytest.raises(TypeError):
        graph.as_graph_element(3.5)
    with tf.Graph().as_default():
        foreign = tf.constant(0.0)
    with pytest.raises(ValueError, match="not an element of this graph"):
        graph.as_graph_element(foreign)


def test_ops_from_another_graph_cannot_be_inputs(graph):
    with tf.Graph().as_default():
        foreign = tf.constant(0.0)
    with pytest.raises(ValueError, match="different graph"):
        tf.identity(foreign)


def test_get_operations_in_creation_order(graph):
    ops = [tf.constant(i).op for i in range(4)]
    assert graph.get_operations() == ops
    assert graph.version == len(ops)


# --- finalize ------------------------------------------------------------------------------------
def test_finalize_forbids_changes(graph):
    c = tf.constant(1.0)
    graph.finalize()
    assert graph.finalized
    with pytest.raises(RuntimeError, match="finalized"):
        tf.constant(2.0)
    with pytest.raises(RuntimeError, match="finalized"):
        tf.add_to_collection("c", 1)
    with pytest.raises(RuntimeError, match="finalized"):
        tf.import_graph_def(graph.as_graph_def(), name="again")
    with tf.Session(graph=graph) as sess:  # running a finalized graph is fine
        assert sess.run(c) == 1.0
    graph._unsafe_unfinalize()
    tf.constant(3.0)


# --- Operation and Tensor ------------------------------------------------------------------------
def test_tensor_properties(graph):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.identity(x, name="y")
    z = tf.identity(x, name="z")
    assert x.name == "x:0" and x.value_index == 0
    assert x.dtype is tf.float32
    assert x.shape.as_list() == [None, 3] and x.get_shape() == x.shape
    assert x.op.name == "x" and x.op.type == "Placeholder"
    assert x.graph is graph
    assert x.consumers() == [y.op, z.op]
    assert y.op.inputs == (x,)
    assert y.op.outputs == [y]
    assert y.op.values() == (y,)
    assert y.op.get_attr("T") is tf.float32
    with pytest.raises(ValueError, match="no attr named"):
        y.op.get_attr("nonexistent")
    assert "x:0" in repr(x) and "float32" in repr(x)
    assert y.op.location.endswith(".py:" + y.op.location.rsplit(":", 1)[1])
    assert "test_graph.py" in y.op.location


def test_set_shape_merges_and_rejects_conflicts(graph):
    x = tf.placeholder(tf.float32, name="x")
    assert x.shape.ndims is None
    x.set_shape([None, 3])
    assert x.shape.as_list() == [None, 3]
    x.set_shape([2, None])
    assert x.shape.as_list() == [2, 3]
    with pytest.raises(ValueError) as info:
        x.set_shape([2, 4])
    assert "x:0" in str(info.value)
    with pytest.raises(ValueError):
        x.set_shape([2, 3, 1])
    assert x.shape.as_list() == [2, 3]


def test_tensor_is_not_a_python_bool_or_array(graph):
    x = tf.constant(1.0)
    with pytest.raises(TypeError):
        bool(x)
    with pytest.raises(TypeError):
        if x:
            pass
    with pytest.raises(TypeError):
        np.asarray(x)
    # Tensors hash by identity so they can be dict keys (feed_dicts).
    assert {x: 1}[x] == 1
    assert x == x and x != tf.constant(1.0)


def test_tensor_len_and_iteration_need_a_static_first_dimension(graph):
    known = tf.constant([[1, 2], [3, 4], [5, 6]])
    assert len(known) == 3
    unknown = tf.placeholder(tf.float32, [None, 2])
    with pytest.raises(TypeError):
        len(unknown)
    with pytest.raises(TypeError):
        iter(unknown)


def test_eval_and_run_use_the_default_session(graph):
    x = tf.constant(3.0)
    with pytest.raises(ValueError, match="default session"):
        x.eval()
    with tf.Session() as sess:
        assert x.eval() == 3.0
        assert tf.get_default_session() is sess
        counter = tf.Variable(0, name="counter")
        counter.initializer.run()
        assert counter.eval() == 0
    assert tf.get_default_session() is None
    other = tf.Session(graph=tf.Graph())
    with pytest.raises(ValueError, match="another graph"):
        x.eval(session=other)


def test_operation_node_def(graph):
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        b = tf.identity(tf.constant(2.0, name="two"), name="b")
    node = b.op.node_def
    assert node.name == "b" and node.op == "Identity"
    assert list(node.input) == ["two", "^a"]
    assert a.op.node_def.device == "/device:CPU:0"


def test_op_type_errors_name_the_op(graph):
    x = tf.constant([1.0, 2.0])
    y = tf.constant([1, 2])
    with pytest.raises((TypeError, ValueError)) as info:
        graph.create_op("AddV2" if _has_op("AddV2") else "Add", [x, y], name="bad_add")
    assert "bad_add" in str(info.value)
    with pytest.raises(KeyError, match="NoSuchOp"):
        graph.create_op("NoSuchOp", [])


def test_shape_function_errors_name_the_op(graph):
    a = tf.constant(np.zeros((2, 3), np.float32))
    b = tf.constant(np.zeros((4, 5), np.float32))
    with pytest.raises(ValueError) as info:
        tf.matmul(a, b, name="bad_matmul")
    assert "bad_matmul" in str(info.value) and "MatMul" in str(info.value)


def test_an_op_that_fails_to_build_leaves_no_trace(graph):
    a = tf.constant(np.zeros((2, 3), np.float32), name="a")
    with pytest.raises(ValueError):
        tf.matmul(a, a, name="bad")
    assert a.consumers() == []
    assert [op.name for op in graph.get_operations()] == ["a"]
    with pytest.raises(KeyError):
        graph.get_operation_by_name("bad")


def test_concurrent_op_creation_gives_unique_names(graph):
    def build():
        with graph.as_default():
            for _ in range(200):
                tf.constant(0.0, name="same")

    threads = [threading.Thread(target=build) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    names = [op.name for op in graph.get_operations()]
    assert len(names) == 800 and len(set(names)) == 800
    assert len({op._id for op in graph.get_operations()}) == 800


def _has_op(op_type):
    from tensorweave.framework import op_def
    return op_type in op_def.registered_op_types()


def test_module_level_helpers_target_the_default_graph(graph):
    assert graph_lib.get_default_graph() is graph
    tf.add_to_collection("k", "v")
    assert graph.get_collection("k") == ["v"]
