"""Each ONNX export rule, one row each: the op's output in ONNX Runtime equals tensorweave's own
(which the op tests check against NumPy) on inputs where the rule's corner cases show (odd
image sizes under SAME padding, strides, transposed operands, kept dimensions)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.onnx_export import graph_def_to_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.timeout(60)

_CONST = np.random.default_rng(7)
_FILTER = _CONST.standard_normal((3, 3, 2, 4)).astype(np.float32)
_DEPTHWISE = _CONST.standard_normal((3, 3, 2, 2)).astype(np.float32)
_MATRIX = _CONST.standard_normal((5, 3)).astype(np.float32)

# (row id, input shape, graph built from the input placeholder)
ROWS = [
    ("conv_same_stride2_odd", [2, 8, 9, 2],
     lambda x: tf.nn.conv2d(x, _FILTER, [1, 2, 2, 1], "SAME")),
    ("conv_valid", [1, 6, 5, 2], lambda x: tf.nn.conv2d(x, _FILTER, [1, 1, 1, 1], "VALID")),
    ("conv_dilated", [1, 9, 9, 2],
     lambda x: tf.nn.conv2d(x, _FILTER, [1, 1, 1, 1], "SAME", dilations=[1, 2, 2, 1])),
    ("depthwise", [1, 7, 7, 2],
     lambda x: tf.nn.depthwise_conv2d(x, _DEPTHWISE, [1, 2, 2, 1], "SAME")),
    ("conv_bias_pool_nchw", [2, 2, 9, 8], lambda x: tf.nn.avg_pool(tf.nn.bias_add(
        tf.nn.conv2d(x, _FILTER, [1, 1, 2, 2], "SAME", data_format="NCHW"),
        [0.5, -1.0, 2.0, 0.0], data_format="NCHW"), [1, 1, 3, 2], [1, 1, 2, 2], "SAME",
        data_format="NCHW")),
    ("max_pool_same_odd", [2, 8, 6, 3], lambda x: tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1],
                                                                 "SAME")),
    ("avg_pool_same_odd", [2, 7, 5, 3], lambda x: tf.nn.avg_pool(x, [1, 2, 3, 1], [1, 2, 2, 1],
                                                                 "SAME")),
    ("avg_pool_valid", [1, 6, 6, 1], lambda x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1],
                                                              "VALID")),
    ("matmul_transposed", [3, 5],
     lambda x: tf.matmul(x, _MATRIX, transpose_a=True, transpose_b=True)),
    ("bias_add_sigmoid", [4, 3], lambda x: tf.sigmoid(tf.nn.bias_add(x, [0.5, -1.0, 2.0]))),
    ("tanh_sub_mul_div", [4, 3], lambda x: tf.tanh(x) * 3.0 - x / 2.0),
    ("relu6_leaky_elu", [4, 3], lambda x: tf.nn.relu6(x * 4) + tf.nn.leaky_relu(x, 0.3)
     + tf.nn.elu(x)),
    ("exp_log_sqrt_rsqrt", [4, 3], lambda x: tf.exp(x) + tf.log(tf.abs(x) + 1) +
     tf.sqrt(tf.square(x)) + tf.rsqrt(tf.abs(x) + 1)),
    ("max_min_squared_difference", [4, 3], lambda x: tf.maximum(x, 0.1) + tf.minimum(x, -0.1)
     + tf.squared_difference(x, 1.0)),
    ("log_softmax", [4, 6], tf.nn.log_softmax),
    ("mean_keepdims", [2, 3, 4], lambda x: tf.reduce_mean(x, [1, 2], keepdims=True)),
    ("sum_max_min", [2, 3, 4], lambda x: tf.reduce_sum(x, 1) + tf.reduce_max(x, 1)
     - tf.reduce_min(x, 1)),
    ("concat_axis1", [2, 3], lambda x: tf.concat([x, tf.nn.relu(x), x * 2], 1)),
    ("transpose_reshape", [2, 3, 4], lambda x: tf.reshape(tf.transpose(x, [2, 0, 1]), [4, -1])),
    ("squeeze_expand_dims", [2, 1, 3], lambda x: tf.expand_dims(tf.squeeze(x, [1]), 0)),
    ("stack_shape_dynamic_reshape", [3, 2, 2],
     lambda x: tf.reshape(x, tf.stack([tf.gather(tf.shape(x), 0), -1]))),
    ("strided_slice_shape_index", [3, 2, 2], lambda x: tf.reshape(x, [tf.shape(x)[0], -1])),
    ("strided_slice_steps", [5, 6, 4], lambda x: x[1:, ::2, -3:-1]),
    ("strided_slice_reverse_shrink", [5, 6, 4], lambda x: x[::-1, 2, -1]),
    ("strided_slice_last_row", [5, 3], lambda x: x[-1] + x[1:-1:2, 0:1]),
    ("argmin_int32_cast", [4, 5],
     lambda x: tf.cast(tf.argmin(x, 1, output_type=tf.int32), tf.float32)),
    ("add_n", [3, 3], lambda x: tf.add_n([x, x * 2, tf.nn.softplus(x)])),
    ("sum_over_no_axes_and_default", [2, 3],
     lambda x: tf.reduce_sum(x, []) * tf.placeholder_with_default(2.0, [])),
]


@pytest.mark.parametrize("shape, build", [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_rule_matches_tensorweave(shape, build):
    x = tf.placeholder(tf.float32, [None] + shape[1:], name="x")
    out = tf.identity(build(x), name="out")
    value = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with tf.Session() as session:
        want = session.run(out, {x: value})
    model = graph_def_to_onnx(tf.get_default_graph().as_graph_def(),
                              [("x", x.name, tf.float32, [None] + shape[1:])],
                              [("out", out.name, out.dtype, out.shape.as_list())])
    runtime = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = runtime.run(None, {"x": value})
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_ellipsis_slices_fail_naming_the_node():
    from tensorweave.framework.onnx_export import UnsupportedOpError

    x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
    out = tf.identity(x[..., 0], name="out")
    with pytest.raises(UnsupportedOpError, match=r"StridedSlice node 'strided_slice.*'\.\.\.'"):
        graph_def_to_onnx(tf.get_default_graph().as_graph_def(),
                          [("x", x.name, tf.float32, [None, 3, 4])],
                          [("out", out.name, tf.float32, [None, 3])])


def test_an_output_named_like_a_node_it_needs_keeps_its_name():
    # The TF node 'out' feeds the output named 'out': names are reserved before the walk.
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    wanted = tf.nn.relu(tf.multiply(x, 10.0, name="out") - 15.0, name="relu")
    model = graph_def_to_onnx(tf.get_default_graph().as_graph_def(),
                              [("x", x.name, tf.float32, [None, 2])],
                              [("out", wanted.name, tf.float32, [None, 2])])
    runtime = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    value = np.array([[-1.0, 2.0]], np.float32)
    np.testing.assert_array_equal(runtime.run(None, {"x": value})[0], [[0.0, 5.0]])


def test_a_placeholder_outside_the_inputs_is_named():
    from tensorweave.framework.onnx_export import UnsupportedOpError

    x = tf.placeholder(tf.float32, [None, 2], name="x")
    keep = tf.placeholder(tf.float32, [], name="keep_prob")
    out = tf.multiply(x, keep, name="out")
    with pytest.raises(UnsupportedOpError, match=r"\['keep_prob'\]"):
        graph_def_to_onnx(tf.get_default_graph().as_graph_def(),
                          [("x", x.name, tf.float32, [None, 2])],
                          [("y", out.name, tf.float32, [None, 2])])
