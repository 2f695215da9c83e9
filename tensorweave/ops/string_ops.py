"""String ops on DT_STRING tensors (bytes), with TF's op names: StringJoin, ReduceJoin,
StringSplit / StringSplitV2 (TF 1.x results: a SparseTensor of tokens), StringLength, Substr,
StringStrip, StringLower/Upper, RegexFullMatch, RegexReplace, StringToNumber, AsString,
UnsortedSegmentJoin, UnicodeTranscode and the hash-bucket ops (string_hash_ops.py).
None is differentiable."""
from tensorweave.framework import common_shapes
from tensorweave.framework.composite_tensor import dispatches_composites
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import array_ops, cond_ops, math_ops, slicing_ops
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op, make_tensor

TensorShape = tensor_shape.TensorShape
_NUMBERS = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
            dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.bool)


def _join_shape(op):
    shape = TensorShape([])
    for tensor in op.inputs:
        shape = common_shapes.broadcast_shapes(shape, tensor.shape)
    return [shape]


def _split_shapes(op):
    if not op.inputs[0].shape.is_compatible_with([None]):
        raise ValueError(f"{op.type} {op.name}: input must be a vector of strings, got "
                         f"{op.inputs[0].shape}")
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


def _elementwise(op):
    return [op.inputs[0].shape]


_OPS = {
    "StringJoin": (["inputs: N * string"], ["output: string"],
                   {"N": "int", "separator": ("string", "")}, _join_shape),
    "ReduceJoin": (["inputs: string", "reduction_indices: int32"], ["output: string"],
                   {"keep_dims": ("bool", False), "separator": ("string", "")},
                   lambda op: [tensor_shape.unknown_shape()]),
    "UnsortedSegmentJoin": (["inputs: string", "segment_ids: Tindices",
                             "num_segments: Tnumsegments"], ["output: string"],
                            {"separator": ("string", ""), "Tindices": "type",
                             "Tnumsegments": ("type", dtypes.int32)},
                            lambda op: [tensor_shape.unknown_shape()]),
    "StringSplit": (["input: string", "delimiter: string"],
                    ["indices: int64", "values: string", "shape: int64"],
                    {"skip_empty": ("bool", True)}, _split_shapes),
    "StringSplitV2": (["input: string", "sep: string"],
                      ["indices: int64", "values: string", "shape: int64"],
                      {"maxsplit": ("int", -1)}, _split_shapes),
    "StringLength": (["input: string"], ["output: int32"], {"unit": ("string", "BYTE")},
                     _elementwise),
    "StringStrip": (["input: string"], ["output: string"], {}, _elementwise),
    "StringLower": (["input: string"], ["output: string"], {"encoding": ("string", "")},
                    _elementwise),
    "StringUpper": (["input: string"], ["output: string"], {"encoding": ("string", "")},
                    _elementwise),
    "Substr": (["input: string", "pos: T", "len: T"], ["output: string"],
               {"T": "type", "unit": ("string", "BYTE")},
               lambda op: [common_shapes.broadcast_shapes(op.inputs[0].shape,
                                                          op.inputs[1].shape)]),
    "RegexFullMatch": (["input: string", "pattern: string"], ["output: bool"], {}, _elementwise),
    "RegexReplace": (["input: string", "pattern: string", "rewrite: string"],
                     ["output: string"], {"replace_global": ("bool", True)}, _elementwise),
    "StringToNumber": (["string_tensor: string"], ["output: out_type"],
                       {"out_type": ("type", dtypes.float32)}, _elementwise),
    "AsString": (["input: T"], ["output: string"],
                 {"T": "type", "precision": ("int", -1), "scientific": ("bool", False),
                  "shortest": ("bool", False), "width": ("int", -1), "fill": ("string", "")},
                 _elementwise),
    "UnicodeTranscode": (["input: string"], ["output: string"],
                        {"input_encoding": "string", "output_encoding": "string",
                         "errors": ("string", "replace"), "replacement_char": ("int", 0xFFFD),
                         "replace_control_characters": ("bool", False)}, _elementwise),
}
for _name, (_inputs, _outputs, _attrs, _shape_fn) in _OPS.items():
    register_op(_name, inputs=_inputs, outputs=_outputs, attrs=_attrs, shape_fn=_shape_fn,
                allowed_types={"T": _NUMBERS} if _name == "AsString" else
                {"T": (dtypes.int32, dtypes.int64)} if _name == "Substr" else None)
    not_differentiable(_name)


def _strings(value, name="input"):
    is_tensor = hasattr(value, "dtype") and hasattr(value, "op")
    tensor = convert_to_tensor(value, dtype=None if is_tensor else dtypes.string, name=name)
    if tensor.dtype != dtypes.string:
        raise TypeError(f"{name} must be a string tensor, got {tensor.dtype.name}")
    return tensor


# --- wrappers ------------------------------------------------------------------------------------
def string_join(inputs, separator="", name=None):
    inputs = [_strings(x, "inputs") for x in inputs]
    if not inputs:
        raise ValueError("string_join: needs at least one input")
    return make_tensor("StringJoin", [inputs], {"separator": str(separator)},
                       name or "StringJoin")


def reduce_join(inputs, axis=None, keep_dims=False, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """Joins the strings along `axis` (in the order listed; all axes, last first, by
    default)."""
    inputs = _strings(inputs, "inputs")
    axis = reduction_indices if axis is None else axis
    keep = keep_dims if keepdims is None else keepdims
    if axis is None:
        rank = inputs.shape.ndims
        axis = (list(range(rank - 1, -1, -1)) if rank is not None else
                math_ops.range_(array_ops.rank(inputs) - 1, -1, -1))
    axis = convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_indices")
    return make_tensor("ReduceJoin", [inputs, axis],
                       {"keep_dims": bool(keep), "separator": str(separator)},
                       name or "ReduceJoin")


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
    num_segments = convert_to_tensor(num_segments, name="num_segments")
    return make_tensor("UnsortedSegmentJoin", [_strings(inputs, "inputs"), segment_ids,
                                               num_segments], {"separator": str(separator)},
                       name or "UnsortedSegmentJoin")


def string_split(source, delimiter=" ", skip_empty=True, name=None, sep=None,
                 result_type="SparseTensor"):
    """TF 1.x tf.string_split: a [rows, max tokens] SparseTensor of the tokens of each element
    of the vector `source`; every byte of `delimiter` separates (empty: split into bytes)."""
    if sep is not None:
        delimiter = sep
    if result_type != "SparseTensor":
        raise ValueError("string_split: only result_type='SparseTensor' (TF 1.x) is supported")
    op = make_op("StringSplit", [_strings(source, "source"),
                                 _strings(delimiter, "delimiter")],
                 {"skip_empty": bool(skip_empty)}, name or "StringSplit")
    return SparseTensor(*op.outputs)


def split(source, sep=None, maxsplit=-1, result_type="SparseTensor", name=None):
    """tf.strings.split as in TF 1.x: like Python's str.split on each element of a vector (sep
    None splits on whitespace runs), the tokens as a SparseTensor."""
    if result_type != "SparseTensor":
        raise ValueError("strings.split: only result_type='SparseTensor' (TF 1.x) is supported; "
                         "RaggedTensor results are not available")
    op = make_op("StringSplitV2", [_strings(source, "source"), _strings(sep or "", "sep")],
                 {"maxsplit": int(maxsplit)}, name or "StringSplit")
    return SparseTensor(*op.outputs)


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def string_length(input, name=None, unit="BYTE"):  # noqa: A002
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"strings.length: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return make_tensor("StringLength", [_strings(input)], {"unit": unit},
                       name or "StringLength")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def string_strip(input, name=None):  # noqa: A002
    """Each element without leading and trailing whitespace."""
    return make_tensor("StringStrip", [_strings(input)], name=name or "StringStrip")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def lower(input, encoding="", name=None):  # noqa: A002
    return make_tensor("StringLower", [_strings(input)], {"encoding": encoding},
                       name or "StringLower")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def upper(input, encoding="", name=None):  # noqa: A002
    return make_tensor("StringUpper", [_strings(input)], {"encoding": encoding},
                       name or "StringUpper")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - TF's argument names
    """The substring of `len` units from `pos` (negative: from the end) of each element."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"substr: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    pos = convert_to_tensor(pos, name="pos")
    length = convert_to_tensor(len, dtype=pos.dtype, name="len")
    return make_tensor("Substr", [_strings(input), pos, length], {"unit": unit},
                       name or "Substr")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def regex_full_match(input, pattern, name=None):  # noqa: A002
    return make_tensor("RegexFullMatch", [_strings(input), _strings(pattern, "pattern")],
                       name=name or "RegexFullMatch")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    return make_tensor("RegexReplace", [_strings(input), _strings(pattern, "pattern"),
                                        _strings(rewrite, "rewrite")],
                       {"replace_global": bool(replace_global)}, name or "RegexReplace")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def string_to_number(string_tensor, out_type=dtypes.float32, name=None):
    out_type = dtypes.as_dtype(out_type)
    if out_type not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(f"string_to_number: out_type must be float32, float64, int32 or int64, "
                        f"got {out_type.name}")
    return make_tensor("StringToNumber", [_strings(string_tensor, "string_tensor")],
                       {"out_type": out_type}, name or "StringToNumber")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1,  # noqa: A002
              fill="", name=None):
    """Numbers (and bools) as strings: printf %f / %e (scientific) / %g (shortest) for floats
    with `precision` digits, %d for integers, padded to `width` with `fill`."""
    if len(fill) > 1:
        raise ValueError(f"as_string: fill must be at most one character, got {fill!r}")
    if scientific and shortest:
        raise ValueError("as_string: scientific and shortest are exclusive")
    input = convert_to_tensor(input)  # noqa: A001
    return make_tensor("AsString", [input],
                       {"precision": int(precision), "scientific": bool(scientific),
                        "shortest": bool(shortest), "width": int(width), "fill": fill},
                       name or "AsString")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    encodings = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
    if input_encoding not in encodings or output_encoding not in encodings:
        raise ValueError(f"unicode_transcode: encodings must be among {encodings}")
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError(f"unicode_transcode: errors must be strict, replace or ignore, got "
                         f"{errors!r}")
    return make_tensor("UnicodeTranscode", [_strings(input)],
                       {"input_encoding": input_encoding, "output_encoding": output_encoding,
                        "errors": errors, "replacement_char": int(replacement_char),
                        "replace_control_characters": bool(replace_control_characters)},
                       name or "UnicodeTranscode")


# --- hash buckets (kernels/string_hash.py: TF's FarmHash, SipHash and legacy hashes) ---------
register_op("StringToHashBucketFast", inputs=["input: string"], outputs=["output: int64"],
            attrs={"num_buckets": "int"}, shape_fn=_elementwise)
register_op("StringToHashBucketStrong", inputs=["input: string"], outputs=["output: int64"],
            attrs={"num_buckets": "int", "key": "list(int)"}, shape_fn=_elementwise)
register_op("StringToHashBucket", inputs=["string_tensor: string"], outputs=["output: int64"],
            attrs={"num_buckets": "int"}, shape_fn=_elementwise)
for _name in ("StringToHashBucketFast", "StringToHashBucketStrong", "StringToHashBucket"):
    not_differentiable(_name)


def _check_buckets(num_buckets, what):
    if int(num_buckets) < 1:
        raise ValueError(f"{what}: num_buckets must be at least 1, got {num_buckets}")
    return int(num_buckets)


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """Fingerprint64(s) % num_buckets for each string (TF's FarmHash: same buckets as TF)."""
    return make_tensor("StringToHashBucketFast", [_strings(input)],
                       {"num_buckets": _check_buckets(num_buckets, "to_hash_bucket_fast")},
                       name or "StringToHashBucketFast")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def string_to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """SipHash-2-4 keyed by key = [k0, k1], mod num_buckets (hard to provoke collisions)."""
    key = [int(k) for k in key]
    if len(key) != 2:
        raise ValueError(f"to_hash_bucket_strong: key must have 2 elements, got {key}")
    return make_tensor("StringToHashBucketStrong", [_strings(input)],
                       {"num_buckets": _check_buckets(num_buckets, "to_hash_bucket_strong"),
                        "key": key}, name or "StringToHashBucketStrong")


@dispatches_composites(1)  # a RaggedTensor maps its flat values
def string_to_hash_bucket(string_tensor, num_buckets, name=None):
    """TF's deprecated legacy hash, mod num_buckets."""
    return make_tensor("StringToHashBucket", [_strings(string_tensor, "string_tensor")],
                       {"num_buckets": _check_buckets(num_buckets, "to_hash_bucket")},
                       name or "StringToHashBucket")


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """The n-grams of the innermost dimension of a dense string tensor, joined by separator:
    [..., n] -> [..., n - width + 1] (+ 2 * padding_width with pad_values), for each width of
    ngram_width (several widths are concatenated). Dense inputs only (no RaggedTensor here)."""
    widths = [int(w) for w in (ngram_width if isinstance(ngram_width, (list, tuple))
                               else [ngram_width])]
    if any(w < 1 for w in widths):
        raise ValueError(f"ngrams: ngram_width must be positive, got {widths}")
    with graph_lib.name_scope(name, "StringNGrams", [data]):
        data = _strings(data, "data")
        if data.shape.ndims is None or data.shape.ndims < 1:
            raise ValueError(f"ngrams: data must be a dense tensor of known rank >= 1, got "
                             f"{data.shape}")
        results = []
        for width in widths:
            sequence = data
            if pad_values is not None:
                left, right = (pad_values if isinstance(pad_values, (list, tuple))
                               else (pad_values, pad_values))
                pad = width - 1 if padding_width is None else int(padding_width)
                if pad:
                    lead = array_ops.shape(data)[:-1]
                    fill_shape = slicing_ops.concat([lead, [pad]], 0)
                    sequence = slicing_ops.concat([
                        array_ops.fill(fill_shape, convert_to_tensor(left, dtypes.string)),
                        data, array_ops.fill(fill_shape, convert_to_tensor(right,
                                                                           dtypes.string))],
                        -1)
            length = array_ops.shape(sequence)[-1]
            count = math_ops.maximum(length - width + 1, 0)
            pieces = [slicing_ops.gather(sequence, math_ops.range_(k, k + count), axis=-1)
                      for k in range(width)]
            grams = string_join(pieces, separator=separator)
            if preserve_short_sequences:
                whole = reduce_join(sequence, axis=-1, keep_dims=True, separator=separator)
                grams = _short_or(grams, whole, count)
            results.append(grams)
        return results[0] if len(results) == 1 else slicing_ops.concat(results, -1)


def _short_or(grams, whole, count):
    """grams, or the whole (short) sequence as one n-gram when it has none."""
    return cond_ops.cond(math_ops.greater(count, 0), lambda: grams, lambda: whole)
