"""Tensors on the wire: raw array bytes, optionally encoded smaller, inline or by reference.

A tensor crossing tasks is its C-ordered array bytes (little-endian), never one protobuf field
per element and never a pickle. A session may ask for a lossy encoding of the float tensors
that cross tasks (`RPCOptions(tensor_wire_encoding=...)`); feeds and fetches between a client
and its master are always exact:

  "float32"   exact (the default; the tensor's own dtype, whatever it is)
  "float16"   rounded to float16: error <= max|x| * 2^-11 + 2^-25 (relative rounding of normal
              values, half the smallest subnormal below that); half the bytes of float32
  "bfloat16"  rounded (to nearest even) to bfloat16, float32's exponent range with 8 bits of
              significand: error <= max|x| * (2^-8 + 2^-23) + 2^-133 (float64 tensors pass
              through float32 first); half the bytes of float32, cheaper to encode than float16
  "int8"      round(x / scale) with scale = max|x| / 127 per tensor: error <= scale / 2
              (plus float rounding, max|x| * 2^-21);
              a quarter of the bytes of float32

Only float32/float64 tensors are encoded. A tensor holding inf or NaN, or a value beyond the
16-bit format's range, is sent exactly instead: an encoding never turns a finite value into an
infinite one. Every encoded tensor carries the bound of the error it added (`max_abs_error`),
which traced steps report per transfer.

Encoding and decoding work chunk by chunk (`encode_chunk`, `decode_chunk`: CHUNK_ELEMENTS
elements at a time, whose temporaries stay in the cache), so that the TCP data plane can put
chunk k on the wire while it encodes chunk k+1, and decode each chunk as it lands.
"""
import sys

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.runtime import buffers
from tensorweave.distributed.protos import tensor_wire_pb2

RAW = tensor_wire_pb2.RAW
FLOAT16 = tensor_wire_pb2.FLOAT16
INT8_SCALED = tensor_wire_pb2.INT8_SCALED
BFLOAT16 = tensor_wire_pb2.BFLOAT16

ENCODINGS = {"float32": RAW, "raw": RAW, "": RAW, None: RAW, "float16": FLOAT16,
             "bfloat16": BFLOAT16, "int8": INT8_SCALED}
ENCODING_NAMES = {RAW: "float32", FLOAT16: "float16", BFLOAT16: "bfloat16",
                  INT8_SCALED: "int8"}
# Elements per chunk: 1 MiB of float32, whose int8 temporaries fit the L2 cache; measured
# (benchmarks/bench_multihost.py) as fast as 4x larger chunks, and small enough that the
# first chunk is on the wire within a millisecond.
CHUNK_ELEMENTS = 256 * 1024
_ENCODED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_FLOAT16_MAX = float(np.finfo(np.float16).max)
_FLOAT16_HALF_SUBNORMAL = 2.0 ** -25
# bfloat16's largest finite value (bits 0x7F7F): anything at most this never rounds to inf,
# through float32 or not. The absolute term of the bound: half bfloat16's smallest subnormal,
# doubled for the float64 -> float32 step below float32's subnormals.
_BFLOAT16_MAX = float(np.array([0x7F7F0000], np.uint32).view(np.float32)[0])
_BFLOAT16_SMALL_ERROR = 2.0 ** -133
_WIRE_DTYPE = {FLOAT16: np.dtype("<f2"), BFLOAT16: np.dtype("<u2"),
               INT8_SCALED: np.dtype("i1")}


def encoding_from_name(name):
    try:
        return ENCODINGS[name]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown tensor wire encoding {name!r}: use 'float32' (exact), "
                         "'float16', 'bfloat16' or 'int8'") from None


class Payload:
    """An array ready for the wire: `header` (a WireTensor without content) and the contiguous
    array whose bytes travel (`data`, None for string tensors)."""

    __slots__ = ("header", "data")

    def __init__(self, header, data):
        self.header = header
        self.data = data

    @property
    def nbytes(self):
        return 0 if self.data is None else self.data.nbytes

    def byte_view(self):
        return memoryview(self.data).cast("B") if self.data.nbytes else memoryview(b"")


_BIG_ENDIAN_HOST = sys.byteorder == "big"
_ENUM_OF_NUMPY = {}   # np.dtype -> (DType, enum): as_dtype is slow for the per-tensor path
_NUMPY_OF_ENUM = {}   # enum -> np.dtype


def _dtype_of(np_dtype):
    found = _ENUM_OF_NUMPY.get(np_dtype)
    if found is None:
        try:
            dtype = dtypes.as_dtype(np_dtype)
        except (TypeError, ValueError, KeyError):
            raise errors.InvalidArgumentError(None, None, f"Cannot send a value of NumPy dtype "
                                              f"{np_dtype} between tasks") from None
        found = _ENUM_OF_NUMPY[np_dtype] = (dtype, dtype.as_datatype_enum)
    return found


def prepare(value, encoding=RAW):
    """(header, source) of `value` under `encoding`, nothing encoded yet. An encoded header
    (header.encoding != RAW) comes with the C-contiguous float `source` that `encode_chunk`
    reads; otherwise `source` is the array whose bytes travel as they are (None for
    strings)."""
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    dtype, enum = _dtype_of(array.dtype)
    header = tensor_wire_pb2.WireTensor(dtype=enum, shape=array.shape)
    if dtype is dtypes.string:
        header.string_val.extend(v if isinstance(v, bytes) else str(v).encode()
                                 for v in array.reshape(-1).tolist())
        return header, None
    if encoding != RAW and array.dtype in _ENCODED_DTYPES and array.size and \
            _describe_encoding(array, encoding, header):
        return header, np.ascontiguousarray(array)
    if array.dtype.byteorder == ">" or (_BIG_ENDIAN_HOST and array.dtype.byteorder == "="):
        array = array.astype(array.dtype.newbyteorder("<"))
    array = np.ascontiguousarray(array)
    if array.dtype.kind == "V":  # bfloat16, float8_*: no buffer format; the header names it
        array = array.view(np.dtype(f"u{array.dtype.itemsize}"))
    return header, array


def encode(value, encoding=RAW):
    """The Payload of `value` (an array or scalar) under `encoding`."""
    return encode_prepared(*prepare(value, encoding))


def encode_prepared(header, source):
    """The Payload of what `prepare` returned, encoded whole."""
    if header.encoding == RAW:
        return Payload(header, source)
    out = buffers.POOL.empty(source.shape, _WIRE_DTYPE[header.encoding])
    flat_in, flat_out = source.reshape(-1), out.reshape(-1)
    for start in range(0, flat_in.size, CHUNK_ELEMENTS):
        stop = start + CHUNK_ELEMENTS
        encode_chunk(header, flat_in[start:stop], flat_out[start:stop])
    return Payload(header, out)


def _describe_encoding(array, encoding, header):
    """Fills the encoding fields of `header` (scale, error bound); False when `array` must
    travel exactly (a non-finite value, or one beyond a 16-bit format's range)."""
    if encoding not in _WIRE_DTYPE:
        raise ValueError(f"Unknown wire encoding {encoding!r}")
    largest = _largest_magnitude(array)
    if not np.isfinite(largest):
        return False
    if encoding == FLOAT16:
        if largest > _FLOAT16_MAX:
            return False
        header.max_abs_error = largest * 2.0 ** -11 + _FLOAT16_HALF_SUBNORMAL
    elif encoding == BFLOAT16:
        if largest > _BFLOAT16_MAX:
            return False
        header.max_abs_error = largest * (2.0 ** -8 + 2.0 ** -23) + _BFLOAT16_SMALL_ERROR
    else:
        header.scale = largest / 127.0 if largest > 0 else 1.0
        # scale / 2 from rounding to an integer, plus the float rounding of x / scale and of
        # q * scale (a few ulps of the largest value).
        header.max_abs_error = header.scale / 2 + largest * 2.0 ** -21 if largest > 0 \
            else 0.0
    header.encoding = encoding
    return True


def _largest_magnitude(array):
    """max|x| (NaN if any x is NaN): max and min chunk by chunk, so that the second reduction
    reads the chunk from the cache (half the time of two passes over a large tensor, which
    the reader waits for before the first byte moves), and no temporary as large as it."""
    flat = array.reshape(-1)
    largest = 0.0
    for start in range(0, flat.size, CHUNK_ELEMENTS):
        chunk = flat[start:start + CHUNK_ELEMENTS]
        high, low = float(chunk.max()), float(chunk.min())
        if high != high:  # NaN (NumPy's max propagates it): no encoding, whatever else
            return high
        largest = max(largest, high, -low)
    return largest


def encode_chunk(header, source, out):
    """Encodes the 1-D float chunk `source` into `out` (the same length, of the wire dtype)."""
    if header.encoding == FLOAT16:
        if source.dtype == np.float32:
            _float32_to_float16(source, out)
        else:  # float64: one correctly rounded cast (through float32 would round twice)
            np.copyto(out, source, casting="unsafe")
    elif header.encoding == INT8_SCALED:
        scaled = np.multiply(source, source.dtype.type(1.0 / header.scale))
        np.rint(scaled, out=scaled)
        np.copyto(out, scaled, casting="unsafe")
    elif header.encoding == BFLOAT16:
        single = source if source.dtype == np.float32 else source.astype(np.float32)
        bits = single.view(np.uint32)
        # Round to nearest, ties to even: add 0x7FFF plus the lowest kept bit, then truncate.
        rounded = np.right_shift(bits, 16)
        np.bitwise_and(rounded, 1, out=rounded)
        rounded += np.uint32(0x7FFF)
        rounded += bits
        rounded >>= 16
        np.copyto(out, rounded, casting="unsafe")
    else:
        raise ValueError(f"encode_chunk: {header.encoding!r} is not a lossy wire encoding")


# float32 -> float16 in integer operations, bit for bit NumPy's cast (round to nearest even)
# for finite values up to float16's max, at twice its speed here (NumPy 2.4's cast of this
# CPU, F16C without AVX-512, is scalar: ~100 ms for 64 MB against ~50 ms; the float16
# encoding is CPU-bound on a 1 Gbit/s link otherwise). F. Giesen's well-known method:
# normal results rebias the exponent and round on the 13 dropped bits; float16 subnormals
# come out of a float addition that aligns them to a magic exponent.
_TO_HALF_BIAS = np.uint32((((15 - 127) << 23) + 0xFFF) & 0xFFFFFFFF)  # wraps on purpose
_HALF_SUBNORMAL_MAGIC_BITS = np.uint32((127 - 15 + 23 - 10 + 1) << 23)
_HALF_SUBNORMAL_MAGIC = _HALF_SUBNORMAL_MAGIC_BITS.reshape(1).view(np.float32)[0]
_HALF_NORMAL_FLOOR_BITS = np.uint32(113 << 23)  # 2^-14, float16's smallest normal
_HALF_NORMAL_FLOOR = _HALF_NORMAL_FLOOR_BITS.reshape(1).view(np.float32)[0]


def _float32_to_float16(source, out):
    bits = source.view(np.uint32)
    magnitude = np.bitwise_and(bits, np.uint32(0x7FFFFFFF))
    half = np.right_shift(magnitude, 13)
    np.bitwise_and(half, 1, out=half)  # the lowest kept bit: ties go to even
    half += magnitude
    half += _TO_HALF_BIAS
    half >>= 13
    small = magnitude < _HALF_NORMAL_FLOOR_BITS
    if small.any():
        aligned = magnitude[small].view(np.float32) + _HALF_SUBNORMAL_MAGIC
        half[small] = aligned.view(np.uint32) - _HALF_SUBNORMAL_MAGIC_BITS
    np.right_shift(bits, 16, out=magnitude)
    np.bitwise_and(magnitude, np.uint32(0x8000), out=magnitude)
    half |= magnitude
    np.copyto(out.view(np.uint16), half, casting="unsafe")


def _float16_to_float32(data, out):
    """The inverse, in integer operations too (~30% faster than NumPy's cast here, bit for bit
    the same for all 65,536 patterns): shift the exponent and mantissa into place and rebias;
    subnormals renormalised by a float subtraction; inf and NaN rebiased once more."""
    bits = out.view(np.uint32)
    np.copyto(bits, data.view(np.uint16))
    sign = np.bitwise_and(bits, np.uint32(0x8000))
    sign <<= 16
    bits &= np.uint32(0x7FFF)
    bits <<= 13
    special = bits >= np.uint32(0x7C00 << 13)
    bits += np.uint32((127 - 15) << 23)
    small = bits < _HALF_NORMAL_FLOOR_BITS
    if small.any():
        renormalised = (bits[small] + np.uint32(1 << 23)).view(np.float32) - _HALF_NORMAL_FLOOR
        bits[small] = renormalised.view(np.uint32)
    if special.any():
        bits[special] += np.uint32((127 - 15) << 23)
    bits |= sign


def decode_chunk(header, data, out):
    """Decodes the 1-D wire-dtype chunk `data` into the float chunk `out` (same length)."""
    if header.encoding == FLOAT16:
        if out.dtype == np.float32:
            _float16_to_float32(data, out)
        else:
            np.copyto(out, data)
    elif header.encoding == INT8_SCALED:
        np.multiply(data, out.dtype.type(header.scale), out=out)
    elif header.encoding == BFLOAT16:
        if out.dtype == np.float32:
            bits = out.view(np.uint32)
            np.copyto(bits, data)
            bits <<= 16
        else:
            out[:] = np.left_shift(data.astype(np.uint32), 16).view(np.float32)
    else:
        raise ValueError(f"decode_chunk: {header.encoding!r} is not a lossy wire encoding")


def wire_dtype(header):
    """The NumPy dtype of a payload's bytes (little-endian)."""
    if header.encoding in _WIRE_DTYPE:
        return _WIRE_DTYPE[header.encoding]
    dtype = _np_dtype(header)
    return dtype.newbyteorder("<") if _BIG_ENDIAN_HOST else dtype


def payload_nbytes(header):
    count = int(np.prod(header.shape, dtype=np.int64)) if header.shape else 1
    return count * wire_dtype(header).itemsize


def empty_payload(header):
    """A writable buffer the payload of `header` can be received into."""
    return np.empty(tuple(header.shape), dtype=wire_dtype(header))


def empty_tensor(header):
    """A writable (recycled) array of the tensor `header` describes, to decode into."""
    return buffers.POOL.empty(tuple(header.shape), _np_dtype(header))


def decode(header, data):
    """The tensor a payload stands for: `data` is the received array (or bytes) of the wire
    dtype; the result has the tensor's dtype and shape."""
    dtype = _np_dtype(header)
    shape = tuple(header.shape)
    if dtype == np.object_:
        if len(header.string_val) != _count(shape):
            raise errors.InvalidArgumentError(None, None, f"A string tensor of shape {shape} "
                                              f"arrived with {len(header.string_val)} elements")
        out = np.empty(len(header.string_val), dtype=object)
        out[:] = list(header.string_val)
        return out.reshape(shape)
    wire = wire_dtype(header)
    if not isinstance(data, np.ndarray):
        expected = _count(shape) * wire.itemsize
        if len(data) != expected:
            raise errors.InvalidArgumentError(
                None, None, f"A {dtypes.as_dtype(header.dtype).name} tensor of shape "
                f"{list(shape)} needs {expected} payload bytes, got {len(data)}")
        data = np.frombuffer(data, dtype=wire)
    elif data.dtype != wire or data.size != _count(shape):
        raise errors.InvalidArgumentError(None, None, "A received payload does not match its "
                                          "header's dtype and shape")
    if header.encoding in _WIRE_DTYPE:
        out = empty_tensor(header)
        flat_in, flat_out = data.reshape(-1), out.reshape(-1)
        for start in range(0, flat_in.size, CHUNK_ELEMENTS):
            stop = start + CHUNK_ELEMENTS
            decode_chunk(header, flat_in[start:stop], flat_out[start:stop])
        return out
    data = data.reshape(shape)
    if data.dtype != dtype:  # a big-endian host
        data = data.astype(dtype)
    return data


def to_inline(value, encoding=RAW):
    """A complete WireTensor with the payload inline (for small tensors)."""
    payload = encode(value, encoding)
    if payload.data is not None:
        payload.header.content = payload.byte_view().tobytes()
    return payload.header


def from_inline(wire_tensor, writable=True):
    """The array of an inline WireTensor (a fresh copy when `writable`)."""
    if wire_tensor.HasField("bulk"):
        raise errors.InternalError(None, None, "from_inline called on a WireTensor held by "
                                   "reference")
    value = decode(wire_tensor, wire_tensor.content)
    if writable and isinstance(value, np.ndarray) and not value.flags.writeable:
        value = value.copy()
    return value


def _np_dtype(header):
    found = _NUMPY_OF_ENUM.get(header.dtype)
    if found is None:
        try:
            found = _NUMPY_OF_ENUM[header.dtype] = np.dtype(
                dtypes.as_dtype(header.dtype).np_dtype)
        except (TypeError, ValueError, KeyError):
            raise errors.InvalidArgumentError(None, None, f"Unknown tensor dtype enum "
                                              f"{header.dtype} on the wire") from None
    return found


def _count(shape):
    count = 1
    for dim in shape:
        if dim < 0:
            raise errors.InvalidArgumentError(None, None, f"Negative dimension in tensor shape "
                                              f"{list(shape)} on the wire")
        count *= int(dim)
    return count
