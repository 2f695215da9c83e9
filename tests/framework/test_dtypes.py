"""tf.DType: conversions from names, NumPy and Python types, properties, and equality."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import dtypes

# (DType, NumPy dtype, TF wire enum, itemsize): the enums are TensorFlow's DataType numbers.
DTYPE_TABLE = [
    (tf.float16, np.float16, 19, 2),
    (tf.float32, np.float32, 1, 4),
    (tf.float64, np.float64, 2, 8),
    (tf.int8, np.int8, 6, 1),
    (tf.int16, np.int16, 5, 2),
    (tf.int32, np.int32, 3, 4),
    (tf.int64, np.int64, 9, 8),
    (tf.uint8, np.uint8, 4, 1),
    (tf.uint16, np.uint16, 17, 2),
    (tf.bool, np.bool_, 10, 1),
]


@pytest.mark.parametrize("dtype,np_dtype,enum,size", DTYPE_TABLE, ids=lambda v: str(v))
def test_numeric_dtype_conversions_and_properties(dtype, np_dtype, enum, size):
    assert tf.as_dtype(np_dtype) is dtype
    assert tf.as_dtype(np.dtype(np_dtype)) is dtype
    assert tf.as_dtype(dtype.name) is dtype
    assert tf.as_dtype(enum) is dtype
    assert dtype.as_datatype_enum == enum
    assert dtype.as_numpy_dtype is np_dtype
    assert dtype.size == size
    assert dtype == np_dtype and dtype == np.dtype(np_dtype) and dtype == dtype.name
    assert dtype.base_dtype is dtype
    assert tf.as_dtype(dtype) is dtype
    assert dtypes.as_dtype(np.zeros(2, np_dtype).dtype) is dtype


def test_string_dtype_accepts_every_numpy_text_kind():
    for value in (np.object_, np.dtype("S5"), np.dtype("U3"), str, bytes, "string"):
        assert tf.as_dtype(value) is tf.string
    assert tf.string.as_numpy_dtype is np.object_
    assert tf.string.as_datatype_enum == 7
    assert not tf.string.is_floating and not tf.string.is_integer


def test_byte_order_does_not_change_the_dtype():
    assert tf.as_dtype(np.dtype(">f8")) is tf.float64
    assert tf.as_dtype(np.dtype("<i4")) is tf.int32


def test_python_types_and_aliases():
    assert tf.as_dtype(float) is tf.float32
    assert tf.as_dtype(int) is tf.int32
    assert tf.as_dtype(bool) is tf.bool
    assert tf.as_dtype("float") is tf.float32
    assert tf.as_dtype("double") is tf.float64
    assert tf.as_dtype("half") is tf.float16
    assert tf.half is tf.float16 and tf.double is tf.float64
    assert tf.as_dtype(complex) is tf.complex128
    assert tf.as_dtype("complex64") is tf.complex64 and tf.as_dtype(np.uint64) is tf.uint64


@pytest.mark.parametrize("bad", ["float33", "complex32", object(), np.timedelta64, np.datetime64,
                                 12345])
def test_as_dtype_rejects_unknown_values(bad):
    with pytest.raises(TypeError):
        tf.as_dtype(bad)


def test_kind_predicates():
    assert all(d.is_floating and not d.is_integer for d in (tf.float16, tf.float32, tf.float64))
    assert all(d.is_integer and not d.is_floating for d in (tf.int8, tf.int32, tf.uint8))
    assert tf.uint8.is_unsigned and tf.uint16.is_unsigned and not tf.int8.is_unsigned
    assert tf.bool.is_bool and not tf.bool.is_integer and not tf.bool.is_floating


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_float_min_max_match_numpy_finfo(dtype):
    info = np.finfo(dtype.as_numpy_dtype)
    assert dtype.min == float(info.min) and dtype.max == float(info.max)


@pytest.mark.parametrize("dtype", [tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16])
def test_integer_min_max_match_numpy_iinfo(dtype):
    info = np.iinfo(dtype.as_numpy_dtype)
    assert (dtype.min, dtype.max) == (int(info.min), int(info.max))


def test_min_max_of_non_numeric_types_raise():
    for dtype in (tf.bool, tf.string):
        with pytest.raises(TypeError):
            dtype.min
        with pytest.raises(TypeError):
            dtype.max


def test_equality_hashing_and_compatibility():
    assert tf.float32 != tf.float64
    assert tf.float32 != None  # noqa: E711 - comparing with None must not raise
    assert tf.float32 != "not a dtype"
    assert not (tf.int32 == np.int64)
    assert {tf.float32: 1}[tf.as_dtype("float32")] == 1
    assert tf.float32.is_compatible_with(np.float32)
    assert not tf.float32.is_compatible_with(tf.float64)
    assert repr(tf.int64) == "tf.int64"


def test_dtypes_pickle_to_the_same_singleton():
    import pickle
    for dtype in dtypes.ALL_DTYPES:
        assert pickle.loads(pickle.dumps(dtype)) is dtype
