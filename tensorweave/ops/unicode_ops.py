"""Unicode ops with TF's names: UnicodeDecode, UnicodeDecodeWithOffsets (a vector of strings to
row_splits + code points [+ byte offsets]), UnicodeEncode (code points + row_splits to strings)
and UnicodeScript. The RaggedTensor-shaped API over them is tensorweave/ragged/
ragged_string_ops.py (tf.strings.unicode_*). None is differentiable."""
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op, make_tensor

TensorShape = tensor_shape.TensorShape
ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
_ERRORS = ("strict", "replace", "ignore")
_DECODE_ATTRS = {"input_encoding": "string", "errors": ("string", "replace"),
                 "replacement_char": ("int", 0xFFFD),
                 "replace_control_characters": ("bool", False),
                 "Tsplits": ("type", dtypes.int64)}


def _vector_input(op):
    if not op.inputs[0].shape.is_compatible_with([None]):
        raise ValueError(f"{op.type} {op.name}: input must be a vector, got "
                         f"{op.inputs[0].shape}")


def _decode_shapes(op):
    _vector_input(op)
    count = op.inputs[0].shape.as_tuple()[0] if op.inputs[0].shape.ndims else None
    splits = TensorShape([None if count is None else count + 1])
    return [splits, TensorShape([None])] + (
        [TensorShape([None])] if op.type == "UnicodeDecodeWithOffsets" else [])


register_op("UnicodeDecode", inputs=["input: string"],
            outputs=["row_splits: Tsplits", "char_values: int32"], attrs=_DECODE_ATTRS,
            shape_fn=_decode_shapes, allowed_types={"Tsplits": (dtypes.int32, dtypes.int64)})
register_op("UnicodeDecodeWithOffsets", inputs=["input: string"],
            outputs=["row_splits: Tsplits", "char_values: int32",
                     "char_to_byte_starts: int64"], attrs=_DECODE_ATTRS,
            shape_fn=_decode_shapes, allowed_types={"Tsplits": (dtypes.int32, dtypes.int64)})


def _encode_shape(op):
    _vector_input(op)
    splits = op.inputs[1].shape
    count = splits.as_tuple()[0] if splits.ndims == 1 else None
    return [TensorShape([None if count is None else count - 1])]


register_op("UnicodeEncode", inputs=["input_values: int32", "input_splits: Tsplits"],
            outputs=["output: string"],
            attrs={"errors": ("string", "replace"), "output_encoding": "string",
                   "replacement_char": ("int", 0xFFFD), "Tsplits": ("type", dtypes.int64)},
            shape_fn=_encode_shape, allowed_types={"Tsplits": (dtypes.int32, dtypes.int64)})
register_op("UnicodeScript", inputs=["input: int32"], outputs=["output: int32"],
            shape_fn=lambda op: [op.inputs[0].shape])
for _name in ("UnicodeDecode", "UnicodeDecodeWithOffsets", "UnicodeEncode", "UnicodeScript"):
    not_differentiable(_name)


def check_options(function, encoding, errors, replacement_char):
    if encoding not in ENCODINGS:
        raise ValueError(f"{function}: encoding must be one of {ENCODINGS}, got {encoding!r}")
    if errors not in _ERRORS:
        raise ValueError(f"{function}: errors must be one of {_ERRORS}, got {errors!r}")
    if not 0 <= int(replacement_char) <= 0x10FFFF or 0xD800 <= int(replacement_char) <= 0xDFFF:
        raise ValueError(f"{function}: replacement_char must be a Unicode code point, got "
                         f"{replacement_char}")


def unicode_decode_vector(strings, input_encoding, errors="replace", replacement_char=0xFFFD,
                          replace_control_characters=False, with_offsets=False, name=None):
    """(row_splits, char_values[, byte starts]) of a vector of strings."""
    check_options("unicode_decode", input_encoding, errors, replacement_char)
    attrs = {"input_encoding": input_encoding, "errors": errors,
             "replacement_char": int(replacement_char),
             "replace_control_characters": bool(replace_control_characters),
             "Tsplits": dtypes.int64}
    op_type = "UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode"
    return make_op(op_type, [convert_to_tensor(strings, dtype=dtypes.string)], attrs,
                   name or op_type).outputs


def unicode_encode_rows(code_points, row_splits, output_encoding, errors="replace",
                        replacement_char=0xFFFD, name=None):
    """A vector of strings: row i encodes code_points[row_splits[i]:row_splits[i + 1]]."""
    check_options("unicode_encode", output_encoding, errors, replacement_char)
    return make_tensor("UnicodeEncode",
                       [convert_to_tensor(code_points, dtype=dtypes.int32),
                        convert_to_tensor(row_splits, dtype=dtypes.int64)],
                       {"errors": errors, "output_encoding": output_encoding,
                        "replacement_char": int(replacement_char), "Tsplits": dtypes.int64},
                       name or "UnicodeEncode")


def unicode_script(input, name=None):  # noqa: A002 - TF's argument name
    """ICU's UScriptCode of each int32 code point (-1 for a value that is not one)."""
    return make_tensor("UnicodeScript", [convert_to_tensor(input, dtype=dtypes.int32)],
                       name=name or "UnicodeScript")
