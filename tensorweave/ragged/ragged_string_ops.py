"""tf.strings ops whose results are ragged: unicode_decode(_with_offsets), unicode_encode,
unicode_split(_with_offsets), unicode_script on ragged input, bytes_split, and split with
result_type='RaggedTensor'. The byte work is done by ops/unicode_ops.py and ops/string_ops.py
on vectors; here a string tensor of any rank (or a RaggedTensor of strings) is flattened to
one vector, and the result is rebuilt with the input's shape as its outer dimensions."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, slicing_ops, string_ops, unicode_ops
from tensorweave.ragged import segment_ids
from tensorweave.ragged.ragged_array_ops import concat_in_rows, gathered_rows
from tensorweave.ragged.ragged_conversion import from_sparse, from_tensor
from tensorweave.ragged.ragged_tensor import RaggedTensor


def _strings(value, what):
    if isinstance(value, RaggedTensor):
        if value.dtype != dtypes.string:
            raise TypeError(f"{what}: expected strings, got a RaggedTensor of "
                            f"{value.dtype.name}")
        return value
    tensor = convert_to_tensor(value, dtype=None if hasattr(value, "op") else dtypes.string,
                               name="input")
    if tensor.dtype != dtypes.string:
        raise TypeError(f"{what}: expected a string tensor, got {tensor.dtype.name}")
    if tensor.shape.ndims is None:
        raise ValueError(f"{what}: the rank of the input must be known")
    return tensor


def _per_string(value, vector_fn):
    """vector_fn maps a vector of n strings to RaggedTensors [n, (k)]; applied to every string
    of `value`, whose dimensions become the outer dimensions of the results."""
    if isinstance(value, RaggedTensor):
        return [value.with_flat_values(r) for r in vector_fn(value.flat_values)]
    rank = value.shape.ndims
    if rank == 1:
        return vector_fn(value)
    if rank == 0:
        return [r.values for r in vector_fn(array_ops.reshape(value, [1]))]
    results = vector_fn(array_ops.reshape(value, [-1]))
    shape = array_ops.shape(value, out_type=dtypes.int64)
    wrapped = []
    for result in results:
        for axis in range(rank - 1, 0, -1):
            width = shape[axis]
            rows = result.nrows() // math_ops.maximum(width, 1)
            splits = math_ops.range_(convert_to_tensor(0, dtypes.int64), rows + 1,
                                     convert_to_tensor(1, dtypes.int64)) * width
            result = RaggedTensor.from_row_splits(result, splits, validate=False)
        wrapped.append(result)
    return wrapped


def _decode(input, input_encoding, errors, replacement_char,  # noqa: A002
            replace_control_characters, with_offsets, name, default_name):
    with graph_lib.name_scope(name, default_name, []):
        strings = _strings(input, default_name)

        def decode(vector):
            outputs = unicode_ops.unicode_decode_vector(
                vector, input_encoding, errors, replacement_char, replace_control_characters,
                with_offsets)
            splits = outputs[0]
            return [RaggedTensor.from_row_splits(values, splits, validate=False)
                    for values in outputs[1:]]
        return _per_string(strings, decode)


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """The code points (int32) of each string: shape input.shape + [(chars)], ragged."""
    return _decode(input, input_encoding, errors, replacement_char,
                   replace_control_characters, False, name, "UnicodeDecode")[0]


def unicode_decode_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """(code points, byte offset where each starts), both input.shape + [(chars)]."""
    codes, starts = _decode(input, input_encoding, errors, replacement_char,
                            replace_control_characters, True, name, "UnicodeDecodeWithOffsets")
    return codes, starts


def _encode_each(code_points, encoding, errors, replacement_char):
    """Every code point of a vector encoded alone: a vector of one-character strings."""
    count = segment_ids.leading_size(code_points)
    singles = math_ops.range_(convert_to_tensor(0, dtypes.int64), count + 1,
                              convert_to_tensor(1, dtypes.int64))
    return unicode_ops.unicode_encode_rows(code_points, singles, encoding, errors,
                                           replacement_char)


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                  name=None):
    """The characters of each string as strings (each re-encoded in input_encoding, so an
    invalid sequence becomes the encoded replacement_char)."""
    with graph_lib.name_scope(name, "UnicodeSplit", []):
        codes = unicode_decode(input, input_encoding, errors, replacement_char)
        return _map_code_points(codes, lambda flat: _encode_each(flat, input_encoding, errors,
                                                                 replacement_char))


def unicode_split_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                               replacement_char=65533, name=None):
    with graph_lib.name_scope(name, "UnicodeSplitWithOffsets", []):
        codes, starts = unicode_decode_with_offsets(input, input_encoding, errors,
                                                    replacement_char)
        chars = _map_code_points(codes, lambda flat: _encode_each(flat, input_encoding, errors,
                                                                  replacement_char))
        return chars, starts


def _map_code_points(codes, function):
    if isinstance(codes, RaggedTensor):
        return codes.with_flat_values(function(codes.flat_values))
    return function(codes)


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   name=None):
    """Strings from int32 code points: the innermost dimension (ragged or dense) of `input`
    holds each string's characters; the result has the outer dimensions."""
    with graph_lib.name_scope(name, "UnicodeEncode", []):
        if isinstance(input, RaggedTensor):
            if input.flat_values.shape.ndims != 1:
                raise ValueError("unicode_encode: a RaggedTensor input must hold scalar code "
                                 "points in its flat values")
            if isinstance(input.values, RaggedTensor):
                return input.with_values(unicode_encode(input.values, output_encoding, errors,
                                                        replacement_char))
            return unicode_ops.unicode_encode_rows(input.values, input.row_splits,
                                                   output_encoding, errors, replacement_char)
        codes = convert_to_tensor(input, dtype=None if hasattr(input, "op") else dtypes.int32,
                                  name="input")
        rank = codes.shape.ndims
        if rank is None or rank == 0:
            raise ValueError(f"unicode_encode: input must have a known rank >= 1, got "
                             f"{codes.shape}")
        shape = array_ops.shape(codes, out_type=dtypes.int64)
        rows = from_tensor(array_ops.reshape(codes, slicing_ops.stack(
            [convert_to_tensor(-1, dtypes.int64), shape[-1]])))
        strings = unicode_ops.unicode_encode_rows(rows.values, rows.row_splits,
                                                  output_encoding, errors, replacement_char)
        return array_ops.reshape(strings, shape[:-1])


def unicode_script(input, name=None):  # noqa: A002 - TF's argument name
    """ICU's UScriptCode of each code point; a RaggedTensor keeps its partition."""
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(unicode_ops.unicode_script(input.flat_values, name))
    return unicode_ops.unicode_script(input, name)


def bytes_split(input, name=None):  # noqa: A002 - TF's argument name
    """The bytes of each string, as one-byte strings: shape input.shape + [(bytes)]."""
    with graph_lib.name_scope(name, "BytesSplit", []):
        def split_vector(vector):
            tokens = string_ops.string_split(vector, delimiter="", skip_empty=True)
            return [from_sparse(tokens)]
        return _per_string(_strings(input, "bytes_split"), split_vector)[0]


def split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor",  # noqa: A002
          source=None, name=None):
    """tf.strings.split (TF 1.x): Python's str.split on every string of any rank; the tokens
    as a SparseTensor (the default) or a RaggedTensor of shape input.shape + [(tokens)]."""
    if (input is None) == (source is None):
        raise ValueError("strings.split: give exactly one of input and source")
    input = source if input is None else input  # noqa: A001
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError(f"strings.split: result_type must be 'SparseTensor' or "
                         f"'RaggedTensor', got {result_type!r}")
    with graph_lib.name_scope(name, "StringSplit", []):
        def split_vector(vector):
            return [from_sparse(string_ops.split(vector, sep, maxsplit))]
        ragged = _per_string(_strings(input, "strings.split"), split_vector)[0]
        if result_type == "SparseTensor" and isinstance(ragged, RaggedTensor):
            return ragged.to_sparse()
        return ragged


def string_split(source, sep=None, skip_empty=True, delimiter=None,
                 result_type="SparseTensor", name=None):
    """tf.string_split (TF 1.x): every byte of the delimiter splits a vector of strings."""
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError(f"string_split: result_type must be 'SparseTensor' or 'RaggedTensor', "
                         f"got {result_type!r}")
    delimiter = sep if sep is not None else (" " if delimiter is None else delimiter)
    tokens = string_ops.string_split(source, delimiter=delimiter, skip_empty=skip_empty,
                                     name=name)
    return from_sparse(tokens) if result_type == "RaggedTensor" else tokens


# --- n-grams of ragged rows ---------------------------------------------------------------------
def _padded(rt, left, right, width):
    """Each row with `width` copies of left before it and of right after it."""
    lengths, starts = rt.row_lengths(), rt.row_starts()
    nvals = segment_ids.leading_size(rt.values)
    pool = slicing_ops.concat([rt.values, array_ops.reshape(convert_to_tensor(
        left, dtypes.string), [1]), array_ops.reshape(convert_to_tensor(right, dtypes.string),
                                                      [1])], 0)

    def source(rows, positions):
        inside = slicing_ops.gather(starts, rows) + positions - width
        length = slicing_ops.gather(lengths, rows)
        after = math_ops.greater_equal(positions, length + width)
        return math_ops.select(math_ops.less(positions, width),
                               array_ops.zeros_like(positions) + nvals,
                               math_ops.select(after, array_ops.zeros_like(positions) + nvals
                                               + 1, inside))
    return gathered_rows(pool, lengths + 2 * width, source)


def _row_ngrams(rt, width, separator, preserve_short):
    lengths, starts = rt.row_lengths(), rt.row_starts()
    zero = array_ops.zeros_like(lengths)
    counts = math_ops.maximum(lengths - (width - 1), zero)
    pieces = []
    for offset in range(width):
        pieces.append(gathered_rows(
            rt.values, counts, lambda rows, positions, k=offset:
            slicing_ops.gather(starts, rows) + positions + k).values)
    grams = string_ops.string_join(pieces, separator=separator) if pieces else None
    if not preserve_short:
        return RaggedTensor.from_row_lengths(grams, counts, validate=False)
    short = math_ops.logical_and(math_ops.equal(counts, zero), math_ops.greater(lengths, zero))
    wholes = string_ops.unsorted_segment_join(rt.values, rt.value_rowids(), rt.nrows(),
                                              separator=separator)
    gram_starts = segment_ids.lengths_to_splits(counts)
    ngrams_total = segment_ids.leading_size(grams)
    pool = slicing_ops.concat([grams, wholes], 0)
    out_lengths = counts + math_ops.cast(short, dtypes.int64)

    def source(rows, positions):
        return math_ops.select(slicing_ops.gather(short, rows), ngrams_total + rows,
                               slicing_ops.gather(gram_starts, rows) + positions)
    return gathered_rows(pool, out_lengths, source)


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """tf.strings.ngrams: a RaggedTensor's rows give ragged rows of n-grams (several widths
    one after another in each row); a dense tensor goes to ops/string_ops.ngrams."""
    if not isinstance(data, RaggedTensor):
        return string_ops.ngrams(data, ngram_width, separator, pad_values, padding_width,
                                 preserve_short_sequences, name)
    widths = [int(w) for w in (ngram_width if isinstance(ngram_width, (list, tuple))
                               else [ngram_width])]
    if any(w < 1 for w in widths):
        raise ValueError(f"ngrams: ngram_width must be positive, got {widths}")
    if data.dtype != dtypes.string:
        raise TypeError(f"ngrams: data must hold strings, got {data.dtype.name}")
    with graph_lib.name_scope(name, "StringNGrams", []):
        if isinstance(data.values, RaggedTensor):
            return data.with_values(ngrams(data.values, ngram_width, separator, pad_values,
                                           padding_width, preserve_short_sequences))
        results = []
        for width in widths:
            rows = data
            if pad_values is not None:
                left, right = pad_values if isinstance(pad_values, (list, tuple)) else \
                    (pad_values, pad_values)
                pad = width - 1 if padding_width is None else int(padding_width)
                if pad:
                    rows = _padded(rows, left, right, pad)
            results.append(_row_ngrams(rows, width, separator, preserve_short_sequences))
        return results[0] if len(results) == 1 else concat_in_rows(results)
