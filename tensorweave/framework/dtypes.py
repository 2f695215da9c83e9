"""Data types: the TF-1.x `tf.float32`-style objects and their NumPy equivalents.

A DType is a small immutable value object; the module keeps one instance per type so identity
comparisons work, and `as_dtype` accepts DTypes, NumPy dtypes, Python types and type names.
"""
import builtins

import ml_dtypes
import numpy as np


class DType:
    """`kind` overrides NumPy's kind letter: "f" for the ml_dtypes floats (bfloat16, float8_*:
    NumPy calls them "V"), "q" for the quantized integers, which store their values in a NumPy
    integer of the same width (qint8 in int8) but are not integers to TF: ops of integer
    types do not take them, and quantize/dequantize move between them and floats."""
    __slots__ = ("_name", "_np", "_enum", "_kind")

    def __init__(self, name, np_dtype, enum, kind=None):
        self._name = name
        self._np = np.dtype(np_dtype)
        self._enum = enum
        self._kind = kind or self._np.kind

    @property
    def name(self):
        return self._name

    @property
    def as_numpy_dtype(self):
        return self._np.type

    @property
    def np_dtype(self):
        return self._np

    @property
    def as_datatype_enum(self):
        return self._enum

    @property
    def base_dtype(self):
        return self

    @property
    def real_dtype(self):
        """The type of the real and imaginary parts (float32 for complex64); itself otherwise."""
        return _REAL_OF.get(self._name, self)

    @property
    def size(self):
        return 0 if self is string else self._np.itemsize

    @property
    def is_floating(self):
        return self._kind == "f"

    @property
    def is_integer(self):
        return self._kind in "iu"

    @property
    def is_quantized(self):
        return self._kind == "q"

    @property
    def is_unsigned(self):
        return self._kind == "u"

    @property
    def is_bool(self):
        return self._np.kind == "b"

    @property
    def is_complex(self):
        return self._np.kind == "c"

    @property
    def is_numpy_compatible(self):
        return self._kind != "q"

    @property
    def min(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).min)
        if self.is_integer or self.is_quantized:
            return int(ml_dtypes.iinfo(self._np).min)
        raise TypeError(f"Cannot find minimum value of {self._name}.")

    @property
    def max(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).max)
        if self.is_integer or self.is_quantized:
            return int(ml_dtypes.iinfo(self._np).max)
        raise TypeError(f"Cannot find maximum value of {self._name}.")

    def is_compatible_with(self, other):
        return self is as_dtype(other)

    def __eq__(self, other):
        if other is None:
            return False
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f"tf.{self._name}"

    def __reduce__(self):
        return as_dtype, (self._name,)


# Enum values are our own wire numbering (used in GraphDef AttrValue.type and TensorProto.dtype).
float16 = DType("float16", np.float16, 19)
float32 = DType("float32", np.float32, 1)
float64 = DType("float64", np.float64, 2)
int8 = DType("int8", np.int8, 6)
int16 = DType("int16", np.int16, 5)
int32 = DType("int32", np.int32, 3)
int64 = DType("int64", np.int64, 9)
uint8 = DType("uint8", np.uint8, 4)
uint16 = DType("uint16", np.uint16, 17)
uint32 = DType("uint32", np.uint32, 22)
uint64 = DType("uint64", np.uint64, 23)
complex64 = DType("complex64", np.complex64, 8)
complex128 = DType("complex128", np.complex128, 18)
bool = DType("bool", np.bool_, 10)  # noqa: A001 - TF exposes tf.bool
string = DType("string", np.object_, 7)
# A host-side Python object that never leaves its device (a while loop's per-iteration history,
# read by its gradient): not a NumPy dtype, so not in ALL_DTYPES and never serialized as data.
variant = DType("variant", np.object_, 21)
# bfloat16: a real 16-bit type (ml_dtypes' NumPy scalar type): feeds, fetches, casts and the
# wire carry its 2-byte values. Enum values follow TF's DataType numbering.
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, 14, kind="f")
qint8 = DType("qint8", np.int8, 11, kind="q")
quint8 = DType("quint8", np.uint8, 12, kind="q")
qint32 = DType("qint32", np.int32, 13, kind="q")
qint16 = DType("qint16", np.int16, 15, kind="q")
quint16 = DType("quint16", np.uint16, 16, kind="q")
# tf.dtypes.experimental: the narrow float and integer types of ml_dtypes (enums as TF's).
float8_e5m2 = DType("float8_e5m2", ml_dtypes.float8_e5m2, 24, kind="f")
float8_e4m3fn = DType("float8_e4m3fn", ml_dtypes.float8_e4m3fn, 25, kind="f")
float8_e4m3fnuz = DType("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 26, kind="f")
float8_e4m3b11fnuz = DType("float8_e4m3b11fnuz", ml_dtypes.float8_e4m3b11fnuz, 27, kind="f")
float8_e5m2fnuz = DType("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 28, kind="f")
int4 = DType("int4", ml_dtypes.int4, 29, kind="i")
uint4 = DType("uint4", ml_dtypes.uint4, 30, kind="u")
int2 = DType("int2", ml_dtypes.int2, 31, kind="i")
uint2 = DType("uint2", ml_dtypes.uint2, 32, kind="u")
float4_e2m1fn = DType("float4_e2m1fn", ml_dtypes.float4_e2m1fn, 33, kind="f")
# A handle to a resource kept on a device (tf.resource); like variant, never data on the wire.
resource = DType("resource", np.object_, 20)
half = float16
double = float64
QUANTIZED_DTYPES = frozenset((qint8, quint8, qint16, quint16, qint32))
_EXTRA_DTYPES = (bfloat16, float8_e5m2, float8_e4m3fn, float8_e4m3fnuz, float8_e4m3b11fnuz,
                 float8_e5m2fnuz, int4, uint4, int2, uint2, float4_e2m1fn)

ALL_DTYPES = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              complex64, complex128, bool, string)
FLOATING = (float16, float32, float64)
INTEGER = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
COMPLEX = (complex64, complex128)
NUMERIC = FLOATING + INTEGER + COMPLEX
_REAL_OF = {"complex64": float32, "complex128": float64}

_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"half": float16, "double": float64, "float": float32, "int": int32})
_BY_ENUM = {d.as_datatype_enum: d for d in ALL_DTYPES}
_BY_NAME[variant.name] = _BY_ENUM[variant.as_datatype_enum] = variant
_BY_NP = {d.np_dtype: d for d in ALL_DTYPES if d is not string}
for _dtype in _EXTRA_DTYPES + tuple(QUANTIZED_DTYPES) + (resource,):
    _BY_NAME[_dtype.name] = _BY_ENUM[_dtype.as_datatype_enum] = _dtype
for _dtype in _EXTRA_DTYPES:  # quantized types are never inferred from a NumPy array
    _BY_NP[_dtype.np_dtype] = _dtype
_PY_TYPES = {float: float32, int: int32, builtins.bool: bool, str: string, bytes: string,
             complex: complex128}


def as_dtype(type_value):
    """Converts a DType, NumPy dtype, Python type, enum value or type name to a DType."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        found = _BY_NAME.get(type_value)
        if found is None:
            raise TypeError(f"Cannot convert {type_value!r} to a tensorweave DType; "
                            f"known names: {sorted(_BY_NAME)}")
        return found
    if isinstance(type_value, (int, np.integer)) and not isinstance(type_value, builtins.bool):
        found = _BY_ENUM.get(int(type_value))
        if found is not None:
            return found
    if type_value in _PY_TYPES:
        return _PY_TYPES[type_value]
    try:
        np_dtype = np.dtype(type_value)
    except TypeError:
        raise TypeError(f"Cannot convert {type_value!r} to a tensorweave DType.") from None
    if np_dtype.kind in "OSU":
        return string
    # Byte order is a property of a buffer, not of the type: '>i4' is int32.
    found = _BY_NP.get(np_dtype.newbyteorder("="))
    if found is None:
        raise TypeError(f"NumPy dtype {np_dtype} has no tensorweave equivalent.")
    return found
