"""TensorProto <-> NumPy for every dtype, Python-value conversion rules, constant folding."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import tensor_util

NUMERIC_VALUES = [
    np.array([[1.5, -2.25], [0.0, 65504.0]], np.float16),
    np.array([[1.5, -2.25, np.inf], [np.nan, 0.0, -0.0]], np.float32),
    np.array([1e-300, -1e300, np.pi], np.float64),
    np.array([-128, 0, 127], np.int8),
    np.array([-32768, 32767], np.int16),
    np.array([[-2**31, 2**31 - 1]], np.int32),
    np.array([-2**63, 2**63 - 1, 5], np.int64),
    np.array([0, 255, 7], np.uint8),
    np.array([0, 65535], np.uint16),
    np.array([[True, False], [False, True]], np.bool_),
    np.float32(3.5).reshape(()),
    np.zeros((0, 3), np.float32),
    np.arange(24, dtype=np.int32).reshape(2, 3, 4),
]


@pytest.mark.parametrize("array", NUMERIC_VALUES, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_numeric_round_trip_is_exact(array):
    proto = tf.make_tensor_proto(array)
    assert proto.dtype == tf.as_dtype(array.dtype).as_datatype_enum
    assert [d.size for d in proto.tensor_shape.dim] == list(array.shape)
    restored = tf.make_ndarray(tf.TensorProto.FromString(proto.SerializeToString()))
    assert restored.dtype == array.dtype and restored.shape == array.shape
    np.testing.assert_array_equal(restored, array)
    assert restored.flags.writeable
    # Raw little-endian bytes of the array, never per-element lists.
    assert proto.tensor_content == array.astype(array.dtype.newbyteorder("<")).tobytes()


def test_string_round_trip_keeps_bytes_and_shape():
    array = np.array([[b"a", b""], ["\u00e9t\u00e9".encode(), b"\x00\xff"]], dtype=object)
    proto = tf.make_tensor_proto(array)
    assert proto.dtype == tf.string.as_datatype_enum
    restored = tf.make_ndarray(tf.TensorProto.FromString(proto.SerializeToString()))
    assert restored.dtype == object and restored.shape == (2, 2)
    assert restored.tolist() == array.tolist()


def test_string_values_from_python_text_are_utf8_encoded():
    restored = tf.make_ndarray(tf.make_tensor_proto(["ab", "\u00e9"]))
    assert restored.tolist() == [b"ab", "\u00e9".encode()]
    assert tf.make_ndarray(tf.make_tensor_proto(b"raw")).tolist() == b"raw"


def test_non_contiguous_and_big_endian_inputs():
    transposed = np.arange(6, dtype=np.float64).reshape(2, 3).T
    np.testing.assert_array_equal(tf.make_ndarray(tf.make_tensor_proto(transposed)), transposed)
    big = np.array([1, 256, -3], dtype=">i4")
    restored = tf.make_ndarray(tf.make_tensor_proto(big))
    np.testing.assert_array_equal(restored, [1, 256, -3])
    assert restored.dtype == np.int32


def test_python_values_follow_tf_default_dtypes():
    assert tf.make_ndarray(tf.make_tensor_proto(1.5)).dtype == np.float32
    assert tf.make_ndarray(tf.make_tensor_proto([1, 2])).dtype == np.int32
    assert tf.make_ndarray(tf.make_tensor_proto(2**40)).dtype == np.int64
    assert tf.make_ndarray(tf.make_tensor_proto(True)).dtype == np.bool_
    assert tf.make_ndarray(tf.make_tensor_proto(np.float64(1.5))).dtype == np.float64


def test_explicit_dtype_and_shape():
    proto = tf.make_tensor_proto([1, 2, 3, 4], dtype=tf.float64, shape=[2, 2])
    np.testing.assert_array_equal(tf.make_ndarray(proto), [[1.0, 2.0], [3.0, 4.0]])
    assert tf.make_ndarray(proto).dtype == np.float64
    filled = tf.make_ndarray(tf.make_tensor_proto(7, dtype=tf.int16, shape=[2, 3]))
    assert filled.dtype == np.int16 and filled.shape == (2, 3) and (filled == 7).all()


@pytest.mark.parametrize("value,dtype,error", [
    ([1.5], tf.int32, TypeError),
    ([300], tf.uint8, ValueError),
    ([-1], tf.uint16, ValueError),
    ([True], tf.float32, TypeError),
    ([1.0], tf.bool, TypeError),
])
def test_lossy_conversions_are_rejected(value, dtype, error):
    with pytest.raises(error):
        tf.make_tensor_proto(value, dtype=dtype)


def test_corrupt_proto_is_rejected():
    proto = tf.make_tensor_proto(np.zeros(4, np.float32))
    proto.tensor_content = proto.tensor_content[:-1]
    with pytest.raises(ValueError, match="bytes"):
        tf.make_ndarray(proto)


def test_shape_protos_keep_unknown_dims_and_rank():
    for shape in ([2, None, 3], [], None, [0]):
        proto = tensor_util.shape_to_proto(tf.TensorShape(shape))
        back = tensor_util.shape_from_proto(tf.TensorShapeProto.FromString(
            proto.SerializeToString()))
        assert back == tf.TensorShape(shape)


def test_constant_value_folds_constants_and_static_shapes():
    c = tf.constant([[1, 2], [3, 4]])
    np.testing.assert_array_equal(tensor_util.constant_value(c), [[1, 2], [3, 4]])
    x = tf.placeholder(tf.float32, [5, 7])
    np.testing.assert_array_equal(tensor_util.constant_value(tf.shape(x)), [5, 7])
    assert tensor_util.constant_value(tf.size(x)) == 35
    assert tensor_util.constant_value(tf.rank(x)) == 2
    np.testing.assert_array_equal(tensor_util.constant_value(tf.stack([c, c])),
                                  [[[1, 2], [3, 4]]] * 2)
    partial = tf.placeholder(tf.float32, [None, 7])
    assert tensor_util.constant_value(tf.shape(partial)) is None
    assert tensor_util.constant_value(x) is None
    assert tensor_util.constant_value(tf.identity(x)) is None


def test_constant_value_as_shape():
    assert tensor_util.constant_value_as_shape(tf.constant([2, -1, 3])).as_list() == [2, None, 3]
    dim = tf.placeholder(tf.int32, [])
    packed = tf.stack([tf.constant(4), dim])
    assert tensor_util.constant_value_as_shape(packed).as_list() == [4, None]
    assert tensor_util.constant_value_as_shape(
        tf.placeholder(tf.int32, [3])).as_list() == [None, None, None]
    assert tensor_util.constant_value_as_shape(tf.placeholder(tf.int32)).ndims is None


def test_constant_shape_argument():
    value = tf.constant([1, 2], shape=[2, 2])
    np.testing.assert_array_equal(tensor_util.constant_value(value), [[1, 2], [2, 2]])
    np.testing.assert_array_equal(tensor_util.constant_value(tf.constant(3.0, shape=[2])),
                                  [3.0, 3.0])
    np.testing.assert_array_equal(
        tensor_util.constant_value(tf.constant([1, 2, 3, 4], shape=[2, 2])), [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="does not fit"):
        tf.constant([1, 2, 3], shape=[2])
    with pytest.raises(TypeError):
        tf.constant([1, 2], shape=[2, 1], verify_shape=True)


def test_constants_are_read_only_snapshots():
    source = np.array([1.0, 2.0], np.float32)
    c = tf.constant(source)
    source[0] = 100.0
    value = tensor_util.constant_value(c)
    assert value[0] == 1.0
    with pytest.raises(ValueError):
        value[0] = 5.0
