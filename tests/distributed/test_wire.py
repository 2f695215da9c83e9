"""Tensors on the wire: raw bytes round-trip exactly; float16 and int8 stay within the bound
they report; values an encoding cannot represent are sent exactly."""
import gc

import numpy as np
import pytest

from tensorweave import errors
from tensorweave.distributed import wire

DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4, 5)])
def test_raw_round_trip_is_exact(dtype, shape):
    value = (np.random.default_rng(0).standard_normal(shape) * 50).astype(dtype)
    wire_tensor = wire.to_inline(value)
    assert len(wire_tensor.content) == value.nbytes  # raw bytes, no per-element encoding
    back = wire.from_inline(wire_tensor)
    assert back.dtype == value.dtype and back.shape == value.shape
    np.testing.assert_array_equal(back, value)
    assert back.flags.writeable


def test_strings_travel_as_elements():
    value = np.array([[b"a", b"bc"], [b"", b"\x00\xff"]], dtype=object)
    np.testing.assert_array_equal(wire.from_inline(wire.to_inline(value)), value)


@pytest.mark.parametrize("encoding,fraction", [("float16", 0.5), ("int8", 0.25)])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 300.0])
def test_lossy_encodings_stay_within_their_reported_bound(encoding, fraction, scale):
    rng = np.random.default_rng(1)
    value = (rng.standard_normal((64, 33)) * scale).astype(np.float32)
    value[0, 0] = 0.0
    wire_tensor = wire.to_inline(value, wire.encoding_from_name(encoding))
    back = wire.from_inline(wire_tensor)
    assert back.dtype == np.float32
    assert len(wire_tensor.content) == value.nbytes * fraction
    error = np.max(np.abs(back - value))
    assert 0 < error <= wire_tensor.max_abs_error
    # The bounds of wire.py's docstring, in closed form.
    largest = np.max(np.abs(value))
    if encoding == "float16":
        assert wire_tensor.max_abs_error == pytest.approx(largest * 2 ** -11 + 2 ** -25)
    else:
        assert wire_tensor.max_abs_error == pytest.approx(largest / 127 / 2 + largest * 2 ** -21)


@pytest.mark.parametrize("value,encoding", [
    (np.array([1.0, np.inf], np.float32), "float16"), (np.array([1.0, np.inf], np.float32), "int8"),
    (np.array([np.nan, 2.0], np.float32), "int8"), (np.array([1e6, 1.0], np.float32), "float16")])
def test_values_an_encoding_cannot_hold_are_sent_exactly(value, encoding):
    wire_tensor = wire.to_inline(value, wire.encoding_from_name(encoding))
    assert wire_tensor.encoding == wire.RAW
    np.testing.assert_array_equal(wire.from_inline(wire_tensor), value)


def test_integers_are_never_encoded():
    value = np.arange(10, dtype=np.int32)
    wire_tensor = wire.to_inline(value, wire.INT8_SCALED)
    assert wire_tensor.encoding == wire.RAW
    np.testing.assert_array_equal(wire.from_inline(wire_tensor), value)


def test_a_payload_of_the_wrong_size_is_an_invalid_argument():
    wire_tensor = wire.to_inline(np.zeros((4, 4), np.float32))
    wire_tensor.content = wire_tensor.content[:-4]
    with pytest.raises(errors.InvalidArgumentError, match="needs 64 payload bytes, got 60"):
        wire.from_inline(wire_tensor)
    wire_tensor = wire.to_inline(np.zeros(3, np.float32))
    wire_tensor.dtype = 9999
    with pytest.raises(errors.InvalidArgumentError, match="Unknown tensor dtype"):
        wire.from_inline(wire_tensor)


def test_unknown_encoding_name():
    with pytest.raises(ValueError, match="'float16', 'bfloat16' or 'int8'"):
        wire.encoding_from_name("bfloat8")


@pytest.mark.parametrize("encoding", ["float16", "int8"])
def test_a_decoded_tensor_kept_by_the_caller_is_not_overwritten_by_the_next(encoding):
    # Decoding writes large results into recycled buffers; one still in use must not be reused.
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(3)]
    kept = []
    for value in values:
        payload = wire.encode(value, wire.encoding_from_name(encoding))
        kept.append(wire.decode(payload.header, payload.data)[::2])  # a view, as users slice
        del payload
        gc.collect()
    for value, back in zip(values, kept):
        np.testing.assert_allclose(back, value[::2], atol=0.05 if encoding == "int8" else 2e-3)
