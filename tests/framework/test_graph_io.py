"""GraphDef: serialization round trips preserve the graph exactly, and imported graphs compute
what the originals computed."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import graph_io
from tensorweave.framework import op_def

# The MLP names cluster devices; a local session runs it by soft-placing them on its CPU.
SOFT = tf.ConfigProto(allow_soft_placement=True)
RNG = np.random.default_rng(7)
W1 = RNG.standard_normal((4, 5)).astype(np.float32)
W2 = RNG.standard_normal((5, 3)).astype(np.float32)
X = RNG.standard_normal((6, 4)).astype(np.float32)


def build_mlp():
    """A small MLP of constants and one variable, with every attr kind the ops offer."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device("/job:worker/task:0/cpu:0"):
        w1 = tf.constant(W1, name="w1")
    bias = tf.Variable(np.linspace(-1, 1, 5).astype(np.float32), name="bias")
    with tf.name_scope("layer1"):
        hidden = tf.nn.relu(tf.matmul(x, w1) + bias, name="hidden")
    with tf.device("/job:ps/task:1"):
        w2 = tf.constant(W2, name="w2")
    logits = tf.matmul(hidden, w2, transpose_b=False, name="logits")
    with tf.control_dependencies([hidden]):
        probs = tf.nn.softmax(logits, name="probs")
    column = tf.expand_dims(tf.reduce_mean(probs, axis=1, keep_dims=False), 1)
    squeezed = tf.squeeze(column, axis=[1], name="squeezed")
    labels = tf.constant(["cat", "dog", "\u00e9"], name="labels")
    return x, bias, probs, squeezed, labels


def test_round_trip_without_prefix_reproduces_the_graph_def(graph):
    build_mlp()
    original = graph.as_graph_def()
    data = original.SerializeToString()
    with tf.Graph().as_default() as imported:
        assert tf.import_graph_def(tf.GraphDef.FromString(data), name="") is None
        assert [op.name for op in imported.get_operations()] == \
            [op.name for op in graph.get_operations()]
        assert imported.as_graph_def() == original
    assert imported.get_operation_by_name("w1").device == "/job:worker/task:0/device:CPU:0"
    assert imported.get_operation_by_name("w2").device == "/job:ps/task:1"
    assert imported.get_operation_by_name("probs").control_inputs == [
        imported.get_operation_by_name("layer1/hidden")]
    assert imported.get_operation_by_name("bias/Assign").get_attr("_class") == ["loc:@bias"]


def test_node_defs_carry_names_inputs_control_inputs_devices_and_attrs(graph):
    build_mlp()
    nodes = {n.name: n for n in graph.as_graph_def().node}
    assert list(nodes["logits"].input) == ["layer1/hidden", "w2"]
    assert list(nodes["probs"].input) == ["logits", "^layer1/hidden"]
    assert nodes["w1"].device == "/job:worker/task:0/device:CPU:0"
    assert nodes["logits"].attr["transpose_b"].b is False
    assert nodes["logits"].attr["T"].type == tf.float32.as_datatype_enum
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 4]
    assert list(nodes["squeezed"].attr["squeeze_dims"].list.i) == [1]
    assert list(nodes["bias/Assign"].attr["_class"].list.s) == [b"loc:@bias"]
    assert list(nodes["labels"].attr["value"].tensor.string_val) == [
        b"cat", b"dog", "\u00e9".encode()]
    np.testing.assert_array_equal(tf.make_ndarray(nodes["w1"].attr["value"].tensor), W1)


def test_round_trip_with_prefix_remaps_names_inputs_and_colocation(graph):
    build_mlp()
    original = graph.as_graph_def()
    with tf.Graph().as_default() as imported:
        tf.import_graph_def(original, name="copy")
        tf.import_graph_def(original)
        tf.import_graph_def(original)
    names = {op.name for op in imported.get_operations()}
    assert {"copy/logits", "import/logits", "import_1/logits"} <= names
    logits = imported.get_operation_by_name("copy/logits")
    assert [t.name for t in logits.inputs] == ["copy/layer1/hidden:0", "copy/w2:0"]
    assert imported.get_operation_by_name("copy/probs").control_inputs == [
        imported.get_operation_by_name("copy/layer1/hidden")]
    assert imported.get_operation_by_name("copy/bias/read").get_attr("_class") == [
        "loc:@copy/bias"]
    assert imported.get_operation_by_name("copy/w2").device == "/job:ps/task:1"


def test_imported_graph_computes_the_same_values(graph):
    x, bias, probs, squeezed, labels = build_mlp()
    with tf.Session(config=SOFT) as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run([probs, squeezed, labels, bias], {x: X})
    reference = np.maximum(X @ W1 + np.linspace(-1, 1, 5).astype(np.float32), 0) @ W2
    reference = np.exp(reference - reference.max(1, keepdims=True))
    reference /= reference.sum(1, keepdims=True)
    np.testing.assert_allclose(expected[0], reference, rtol=1e-5)
    data = graph.as_graph_def().SerializeToString()
    with tf.Graph().as_default() as imported:
        tf.import_graph_def(data, name="net")
        with tf.Session(config=SOFT) as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="net/bias"):
                sess.run("net/bias/read:0")
            sess.run("net/bias/Assign")
            got = sess.run(["net/probs:0", "net/squeezed:0", "net/labels:0", "net/bias/read:0"],
                           {"net/x:0": X})
    for want, have in zip(expected, got):
        if want.dtype == object:
            assert want.tolist() == have.tolist()
        else:
            np.testing.assert_array_equal(want, have)


def test_input_map_and_return_elements(graph):
    build_mlp()
    original = graph.as_graph_def()
    with tf.Graph().as_default():
        replacement = tf.constant(X[:2], name="replacement")
        probs, hidden_op, squeezed = tf.import_graph_def(
            original, input_map={"x:0": replacement}, name="m",
            return_elements=["probs:0", "layer1/hidden", "squeezed"])
        assert isinstance(probs, tf.Tensor) and probs.name == "m/probs:0"
        assert isinstance(hidden_op, tf.Operation) and hidden_op.name == "m/layer1/hidden"
        assert isinstance(squeezed, tf.Operation)
        matmul = tf.get_default_graph().get_operation_by_name("m/layer1/MatMul")
        assert matmul.inputs[0] is replacement
        assert probs.shape.as_list() == [2, 3]
        with tf.Session(config=SOFT) as sess:
            sess.run("m/bias/Assign")
            got = sess.run(probs)
        assert got.shape == (2, 3)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)
        # The bare node name maps output 0 too.
        (mapped,) = tf.import_graph_def(original, input_map={"x": replacement},
                                        return_elements=["layer1/hidden:0"], name="n")
        assert mapped.op.inputs[0].op.inputs[0].op.inputs[0] is replacement


def test_import_rejects_bad_graph_defs_before_adding_anything(graph):
    build_mlp()
    original = graph.as_graph_def()
    with tf.Graph().as_default() as target:
        stand_in = tf.constant(1.0, name="stand_in")

        def fails(graph_def, match, **kwargs):
            with pytest.raises(ValueError, match=match):
                tf.import_graph_def(graph_def, **kwargs)
            assert target.get_operations() == [stand_in.op]

        unknown = tf.GraphDef()
        unknown.CopyFrom(original)
        unknown.node.add(name="mystery", op="FrobnicateV7")
        fails(unknown, "FrobnicateV7")
        missing = tf.GraphDef()
        missing.CopyFrom(original)
        missing.node.add(name="orphan", op="Identity", input=["ghost:0"])
        fails(missing, "ghost")
        missing_control = tf.GraphDef()
        missing_control.CopyFrom(original)
        missing_control.node.add(name="waits", op="NoOp", input=["^phantom"])
        fails(missing_control, "phantom")
        fails(original, "absent", return_elements=["absent:0"])
        fails(original, "nothere", input_map={"nothere:0": stand_in})
        cyclic = tf.GraphDef()
        a = cyclic.node.add(name="a", op="NoOp", input=["^b"])
        cyclic.node.add(name="b", op="NoOp", input=["^a"])
        assert a.name == "a"
        with pytest.raises(ValueError, match="cycle"):
            tf.import_graph_def(cyclic)


def test_import_of_duplicate_names_without_prefix_fails(graph):
    tf.constant(1.0, name="c")
    with pytest.raises(ValueError, match="Duplicate"):
        tf.import_graph_def(graph.as_graph_def(), name="")


def test_imported_names_are_reserved(graph):
    tf.constant(1.0, name="c")
    with tf.Graph().as_default() as other:
        tf.import_graph_def(graph.as_graph_def(), name="")
        assert tf.constant(2.0, name="c").op.name == "c_1"
        with tf.name_scope("import") as scope:
            assert scope == "import/"
        assert other.get_operation_by_name("c").type == "Const"


def test_deep_chains_import_without_recursion_limits(graph):
    x = tf.constant(1.0)
    for _ in range(2500):
        x = tf.identity(x)
    with tf.Graph().as_default() as imported:
        tf.import_graph_def(graph.as_graph_def(), name="")
    assert len(imported.get_operations()) == 2501


def test_add_shapes_records_output_shapes(graph):
    tf.placeholder(tf.float32, [None, 3], name="x")
    node = graph.as_graph_def(add_shapes=True).node[0]
    (shape,) = node.attr["_output_shapes"].list.shape
    assert [d.size for d in shape.dim] == [-1, 3]
    with tf.Graph().as_default() as imported:
        tf.import_graph_def(graph.as_graph_def(add_shapes=True), name="")
    assert "_output_shapes" not in imported.get_operation_by_name("x").attrs


# Every attr kind the op-definition table knows, through encode -> bytes -> decode.
ATTR_VALUES = [
    ("type", tf.float64),
    ("int", -(2**40)),
    ("float", 0.125),
    ("bool", True),
    ("bool", False),
    ("string", "container/name"),
    ("shape", tf.TensorShape([None, 3])),
    ("shape", tf.TensorShape(None)),
    ("tensor", np.arange(6, dtype=np.int64).reshape(2, 3)),
    ("list(int)", [3, -1, 0]),
    ("list(float)", [0.5, -2.0]),
    ("list(bool)", [True, False, True]),
    ("list(type)", [tf.int32, tf.string]),
    ("list(string)", ["loc:@a", "loc:@b"]),
    ("list(shape)", [tf.TensorShape([1]), tf.TensorShape(None)]),
    ("list(int)", []),
]


@pytest.mark.parametrize("kind,value", ATTR_VALUES, ids=lambda v: str(v)[:20])
def test_attr_encoding_round_trips_every_kind(kind, value):
    assert kind in op_def.ATTR_KINDS
    proto = graph_io._encode_attr(kind, value)
    proto = tf.AttrValue.FromString(proto.SerializeToString())
    decoded = graph_io._decode_attr(kind, proto)
    if isinstance(value, np.ndarray):
        np.testing.assert_array_equal(decoded, value)
        assert decoded.dtype == value.dtype
    else:
        assert decoded == value
        assert type(decoded) is type(value) or kind.startswith("list")


def test_private_attrs_of_any_kind_survive_a_round_trip(graph):
    op = tf.no_op(name="tagged")
    private = {"_scale": 0.5, "_count": 3, "_flag": True, "_label": "x", "_dims": [1, 2],
               "_weights": [0.25, 0.75], "_types": [tf.float32], "_dtype": tf.int64,
               "_shape": tf.TensorShape([2, None])}
    for key, value in private.items():
        op._set_attr(key, value)
    with tf.Graph().as_default() as imported:
        tf.import_graph_def(graph.as_graph_def(), name="")
    copy = imported.get_operation_by_name("tagged")
    for key, value in private.items():
        assert copy.get_attr(key) == value, key
