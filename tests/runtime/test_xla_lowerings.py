"""Every JAX lowering of the XLA backend against the op's own NumPy kernel on random inputs
(one table row per lowering: the inputs, the attrs, the tolerance), and the gradients of the
usual layers computed in a compiled cluster against the NumPy path's."""
import numpy as np
import pytest

pytest.importorskip("jax")

import tensorweave as tf  # noqa: E402
from tensorweave.kernels import registry  # noqa: E402
from tensorweave.runtime import resources, xla  # noqa: E402

lowerings = xla.backend()[1]
RNG = np.random.default_rng(7)


def normal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def positive(*shape, dtype=np.float32):
    return (RNG.random(shape) + 0.5).astype(dtype)


def ints(*shape, high=5):
    return RNG.integers(0, high, shape).astype(np.int32)


F32 = tf.float32
UNARY_ANY = ["Neg", "Abs", "Sign", "Square", "Exp", "Expm1", "Tanh", "Sin", "Cos", "Floor",
             "Ceil", "Sigmoid", "Relu", "Relu6", "Elu", "Softplus"]
UNARY_POSITIVE = ["Sqrt", "Log", "Log1p", "Reciprocal", "Rsqrt"]
BINARY = ["Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference",
          "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
          "ReluGrad", "Relu6Grad", "EluGrad", "SoftplusGrad"]

# op type -> (inputs, attrs); inputs broadcast as the graph's would
ROWS = {name: ([normal(4, 5)], {}) for name in UNARY_ANY}
ROWS.update({name: ([positive(4, 5)], {}) for name in UNARY_POSITIVE})
ROWS.update({name: ([normal(4, 5), normal(5) * 3], {}) for name in BINARY})
ROWS.update({name: ([normal(4, 5), normal(4, 5) * 3], {}) for name in BINARY if "Grad" in name})
ROWS.update({
    "FloorDiv": ([ints(6) + 7, ints(6) + 1], {}),
    "FloorMod": ([normal(6), positive(6)], {}),
    "Pow": ([positive(3, 2), normal(3, 2)], {}),
    "LogicalNot": ([normal(5) > 0], {}),
    "LogicalAnd": ([normal(5) > 0, normal(5) > 0], {}),
    "LogicalOr": ([normal(5) > 0, normal(5) > 0], {}),
    "SelectV2": ([normal(4, 5) > 0, normal(4, 5), normal(5)], {}),
    "Cast": ([normal(4, 5) * 4], {"DstT": tf.int32, "Truncate": False}),
    "MatMul": ([normal(6, 4), normal(5, 4)], {"transpose_a": False, "transpose_b": True}),
    "BatchMatMulV2": ([normal(2, 3, 4), normal(4, 5)], {"adj_x": False, "adj_y": False}),
    "BiasAdd": ([normal(3, 4, 5), normal(5)], {"data_format": "NHWC"}),
    "BiasAddGrad": ([normal(3, 4, 5)], {"data_format": "NHWC"}),
    "Softmax": ([normal(4, 6)], {}),
    "LogSoftmax": ([normal(4, 6)], {}),
    "SoftmaxCrossEntropyWithLogits": ([normal(4, 6), np.eye(6, dtype=np.float32)[[0, 2, 5, 1]]],
                                      {}),
    "SparseSoftmaxCrossEntropyWithLogits": ([normal(4, 6), np.array([0, 2, 5, 1], np.int32)], {}),
    "Identity": ([normal(3)], {}),
    "StopGradient": ([normal(3)], {}),
    "NoOp": ([], {}),
    "Reshape": ([normal(3, 4), np.array([2, -1], np.int32)], {}),
    "ExpandDims": ([normal(3, 4), np.array(1, np.int32)], {}),
    "Squeeze": ([normal(3, 1, 4)], {"squeeze_dims": [1]}),
    "Transpose": ([normal(2, 3, 4), np.array([2, 0, 1], np.int32)], {}),
    "BroadcastTo": ([normal(4), np.array([3, 4], np.int32)], {}),
    "SumToShape": ([normal(3, 2, 4), np.array([1, 4], np.int32)], {}),
    "Fill": ([np.array([2, 3], np.int32), np.array(1.5, np.float32)], {}),
    "ZerosLike": ([normal(2, 3)], {}),
    "OnesLike": ([ints(2, 3)], {}),
    "Tile": ([normal(2, 3), np.array([2, 1], np.int32)], {}),
    "Pack": ([normal(2, 3), normal(2, 3)], {"axis": 1}),
    "ConcatV2": ([normal(2, 3), normal(2, 2), np.array(1, np.int32)], {}),
    "ArgMax": ([normal(4, 6), np.array(1, np.int32)], {"output_type": tf.int64}),
    "ArgMin": ([normal(4, 6), np.array(0, np.int32)], {"output_type": tf.int32}),
})
_CONV = {"strides": [1, 2, 1, 1], "padding": "SAME", "data_format": "NHWC",
         "dilations": [1, 1, 1, 1], "explicit_paddings": []}
_CONV_NCHW = {"strides": [1, 1, 1, 1], "padding": "EXPLICIT", "data_format": "NCHW",
              "dilations": [1, 1, 2, 1], "explicit_paddings": [0, 0, 0, 0, 1, 2, 0, 1]}
_POOL = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID",
         "data_format": "NHWC"}
_images, _filters = normal(2, 7, 6, 3), normal(3, 3, 3, 4)
_pooled = registry.get_kernel("MaxPool").compute(_images, **_POOL)
ROWS.update({
    "Conv2D": ([_images, _filters], _CONV),
    "Conv2DBackpropInput": ([np.array([2, 7, 6, 3], np.int32), _filters, normal(2, 4, 6, 4)],
                            _CONV),
    "Conv2DBackpropFilter": ([_images, np.array([3, 3, 3, 4], np.int32), normal(2, 4, 6, 4)],
                             _CONV),
    "MaxPool": ([_images], _POOL),
    "MaxPoolGrad": ([_images, _pooled, normal(*_pooled.shape)], _POOL),
})
NCHW_ROWS = {"Conv2D": ([normal(2, 3, 7, 6), _filters], _CONV_NCHW),
             "Conv2DBackpropFilter": ([normal(2, 3, 7, 6), np.array([3, 3, 3, 4], np.int32),
                                       normal(2, 4, 6, 5)], _CONV_NCHW)}
for _name in ("Sum", "Mean", "Max", "Min", "Prod"):
    ROWS[_name] = ([normal(3, 4, 5), np.array([0, 2], np.int32)], {"keep_dims": False})
ROWS["Sum"] = ([ints(3, 4), np.array([1], np.int32)], {"keep_dims": True})  # int stays int32


CASES = [(name, ROWS[name]) for name in sorted(ROWS)] + \
    [(name + " NCHW", row) for name, row in NCHW_ROWS.items()]


@pytest.mark.parametrize("op_type, row", CASES, ids=[case[0] for case in CASES])
def test_lowering_matches_the_numpy_kernel(op_type, row):
    op_type = op_type.split()[0]
    inputs, attrs = row
    expected = registry.get_kernel(op_type).compute(*inputs, **attrs)
    got = lowerings.LOWERINGS[op_type](*inputs, **attrs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for mine, reference in zip(got, expected):
        mine, reference = np.asarray(mine), np.asarray(reference)
        assert mine.dtype == reference.dtype, op_type
        np.testing.assert_allclose(mine, reference, rtol=2e-5, atol=2e-5, err_msg=op_type)


def _cell(value):
    cell = resources.VariableCell("v", tf.as_dtype(value.dtype), tf.TensorShape(value.shape))
    cell.value = value
    return cell


def _hyper(*values):
    return [np.array(v, np.float32) for v in values]


# op type -> (variable values, the other inputs, attrs)
REF_ROWS = {
    "Assign": ([normal(3, 4)], [normal(3, 4)], {"validate_shape": True, "use_locking": False}),
    "AssignAdd": ([normal(3, 4)], [normal(3, 4)], {"use_locking": False}),
    "AssignSub": ([normal(3, 4)], [normal(3, 4)], {"use_locking": False}),
    "ApplyGradientDescent": ([normal(3, 4)], _hyper(0.1) + [normal(3, 4)],
                             {"use_locking": False}),
    "ApplyMomentum": ([normal(3, 4), normal(3, 4)], _hyper(0.1) + [normal(3, 4)] + _hyper(0.9),
                      {"use_locking": False, "use_nesterov": True}),
    "ApplyAdam": ([normal(3, 4), normal(3, 4), positive(3, 4)],
                  _hyper(0.9 ** 3, 0.999 ** 3, 1e-3, 0.9, 0.999, 1e-8) + [normal(3, 4)],
                  {"use_locking": False, "use_nesterov": False}),
    "ApplyAdagrad": ([normal(3, 4), positive(3, 4)], _hyper(0.1) + [normal(3, 4)],
                     {"use_locking": False, "update_slots": True}),
    "ApplyRMSProp": ([normal(3, 4), positive(3, 4), normal(3, 4)],
                     _hyper(0.01, 0.9, 0.5, 1e-7) + [normal(3, 4)], {"use_locking": False}),
}


@pytest.mark.parametrize("op_type", sorted(REF_ROWS))
def test_update_lowering_matches_the_numpy_kernel(op_type):
    variables, inputs, attrs = REF_ROWS[op_type]
    got = lowerings.REF_LOWERINGS[op_type](*variables, *inputs, **attrs)
    cells = [_cell(v.copy()) for v in variables]
    kernel = registry.get_kernel(op_type)
    assert kernel.num_refs == len(variables)
    kernel.compute(*cells, *inputs, **attrs)  # updates the cells in place
    assert len(got) == len(cells)
    for mine, cell in zip(got, cells):
        np.testing.assert_allclose(np.asarray(mine), cell.value, rtol=2e-6, atol=1e-7,
                                   err_msg=op_type)


def test_every_lowering_is_of_a_registered_op_and_has_a_row():
    for op_type in list(lowerings.LOWERINGS) + list(lowerings.REF_LOWERINGS):
        assert registry.get_kernel(op_type) is not None, op_type
    assert set(lowerings.LOWERINGS) == set(ROWS)
    assert set(lowerings.REF_LOWERINGS) == set(REF_ROWS)


# --- gradients: the backward graphs of the usual layers, compiled, against the NumPy path ---
def _layer(name, x):
    w = tf.constant(normal(5, 3))
    b = tf.constant(normal(3))
    product = tf.matmul(x, w)
    return {"relu": lambda: tf.nn.relu(tf.nn.bias_add(product, b)),
            "tanh": lambda: tf.tanh(product + b),
            "sigmoid": lambda: tf.sigmoid(product - b),
            "softmax": lambda: tf.nn.softmax(product * b),
            "xent": lambda: tf.nn.softmax_cross_entropy_with_logits_v2(
                labels=tf.nn.softmax(tf.constant(normal(4, 3))), logits=product),
            "sparse_xent": lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.constant([0, 2, 1, 1]), logits=product),
            "elu_max": lambda: tf.reduce_max(tf.nn.elu(product), axis=1),
            "mean_square": lambda: tf.reduce_mean(tf.square(product / (tf.abs(b) + 1.0)))}[name]()


@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid", "softmax", "xent", "sparse_xent",
                                  "elu_max", "mean_square"])
def test_gradients_computed_in_a_cluster_match_numpy(name):
    data = normal(4, 5)
    results = []
    start = RNG.bit_generator.state
    for level in (tf.OptimizerOptions.OFF, tf.OptimizerOptions.ON_1):
        RNG.bit_generator.state = start  # the same constants in both graphs
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, [None, 5])
            y = _layer(name, x)
            weights = tf.constant(normal(*[4, 3][:len(y.shape)]) if len(y.shape) else 1.0)
            loss = tf.reduce_sum(y * weights)
            grad = tf.gradients(loss, x)[0]
            config = tf.ConfigProto()
            config.graph_options.optimizer_options.global_jit_level = level
            with tf.Session(config=config) as sess:
                metadata = tf.RunMetadata()
                results.append(sess.run([loss, grad], {x: data},
                                        options=tf.RunOptions(trace_level=3),
                                        run_metadata=metadata))
                types = [s.timeline_label for d in metadata.step_stats.dev_stats
                         for s in d.node_stats]
                runners = [n.compute for plan in sess._plans.values() for part in plan.plans
                           for n in part.nodes if n.op_type == xla.CLUSTER_TYPE]
                assert all(r.numpy_steps == 0 for r in runners)  # it really ran compiled
        if level == tf.OptimizerOptions.ON_1:
            assert types == [xla.CLUSTER_TYPE], types  # the whole step is one compiled node
    for mine, reference in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-6)
