"""Kernels of the Unicode ops: UnicodeDecode(WithOffsets), UnicodeEncode, UnicodeScript.

Python's codecs are the decoding authority: an invalid sequence is the span its strict decoder
reports (the "maximal subpart" practice ICU follows too), replaced by one replacement_char,
dropped, or an InvalidArgumentError, as `errors` says. Strings are object arrays of bytes.
"""
import numpy as np

from tensorweave.framework import errors as errors_lib
from tensorweave.kernels.registry import register_kernel
from tensorweave.kernels.strings import as_strings

CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_MAX_CODEPOINT = 0x10FFFF


def _bad(message):
    return errors_lib.InvalidArgumentError(None, None, message)


def _codec(op, encoding):
    if encoding not in CODECS:
        raise _bad(f"{op}: encoding must be one of {sorted(CODECS)}, got {encoding!r}")
    return CODECS[encoding]


def decode_one(data, codec, errors, replacement_char, replace_control_characters, op):
    """(code points, byte offset of each) of one byte string."""
    chars, starts, position = [], [], 0
    while position < len(data):
        try:
            text, bad = data[position:].decode(codec), None
        except UnicodeDecodeError as exc:
            text = data[position:position + exc.start].decode(codec)
            bad = (position + exc.start, position + exc.end, exc.reason)
        offset = position
        for char in text:
            code = ord(char)
            if replace_control_characters and code < 0x20:
                code = replacement_char
            chars.append(code)
            starts.append(offset)
            offset += len(char.encode(codec))
        if bad is None:
            break
        if errors == "strict":
            raise _bad(f"{op}: invalid {codec} at byte {bad[0]} of {data!r}: {bad[2]}")
        if errors == "replace":
            chars.append(replacement_char)
            starts.append(bad[0])
        position = bad[1]
    return chars, starts


def _decode(input, input_encoding, errors, replacement_char, replace_control_characters,  # noqa: A002
            op):
    codec = _codec(op, input_encoding)
    strings = as_strings(input)
    if strings.ndim != 1:
        raise _bad(f"{op}: input must be a vector of strings, got shape {list(strings.shape)}")
    splits, chars, starts = [0], [], []
    for data in strings.tolist():
        row_chars, row_starts = decode_one(data, codec, errors, replacement_char,
                                           replace_control_characters, op)
        chars += row_chars
        starts += row_starts
        splits.append(len(chars))
    return (np.asarray(splits, np.int64), np.asarray(chars, np.int32),
            np.asarray(starts, np.int64))


@register_kernel("UnicodeDecode")
def unicode_decode(input, *, input_encoding, errors, replacement_char,  # noqa: A002
                   replace_control_characters, Tsplits):  # noqa: N803 - TF's attr name
    splits, chars, _ = _decode(input, input_encoding, errors, replacement_char,
                               replace_control_characters, "UnicodeDecode")
    return splits.astype(Tsplits.np_dtype), chars


@register_kernel("UnicodeDecodeWithOffsets")
def unicode_decode_with_offsets(input, *, input_encoding, errors, replacement_char,  # noqa: A002
                                replace_control_characters, Tsplits):  # noqa: N803
    splits, chars, starts = _decode(input, input_encoding, errors, replacement_char,
                                    replace_control_characters, "UnicodeDecodeWithOffsets")
    return splits.astype(Tsplits.np_dtype), chars, starts


def is_codepoint(code):
    return 0 <= code <= _MAX_CODEPOINT and not 0xD800 <= code <= 0xDFFF


@register_kernel("UnicodeEncode")
def unicode_encode(input_values, input_splits, *, errors, output_encoding, replacement_char,
                   Tsplits):  # noqa: N803 - TF's attr name
    codec = _codec("UnicodeEncode", output_encoding)
    values = np.asarray(input_values).reshape(-1).tolist()
    splits = np.asarray(input_splits).reshape(-1).tolist()
    if not splits or splits[0] != 0 or splits[-1] != len(values) or \
            any(b < a for a, b in zip(splits, splits[1:])):
        raise _bad(f"UnicodeEncode: input_splits must run from 0 to {len(values)} without "
                   f"decreasing, got {splits}")
    out = np.empty(len(splits) - 1, dtype=object)
    for row, (start, limit) in enumerate(zip(splits, splits[1:])):
        chars = []
        for code in values[start:limit]:
            if not is_codepoint(code):
                if errors == "strict":
                    raise _bad(f"UnicodeEncode: {code} is not a Unicode code point")
                if errors == "ignore":
                    continue
                code = replacement_char
            chars.append(chr(code))
        out[row] = "".join(chars).encode(codec)
    return out


@register_kernel("UnicodeScript")
def unicode_script(input):  # noqa: A002 - TF's argument name
    from tensorweave.kernels.unicode_scripts import script_code
    codes = np.asarray(input)
    out = np.empty(codes.shape, np.int32)
    flat = out.reshape(-1)
    for k, code in enumerate(codes.reshape(-1).tolist()):
        flat[k] = script_code(code) if is_codepoint(code) else -1
    return out
