"""Kernel of SparseCross (tf.sparse.cross / cross_hashed, crossed feature columns): per batch
row, every combination of one feature from each input (the last input varying fastest).

String crosses join the features with "_X_" (integers in decimal). Hashed crosses chain TF's
FingerprintCat64 from hash_key over each feature's hash (FarmHash Fingerprint64 of a string,
the integer itself otherwise) and take it mod num_buckets (mod 2^63 - 1 when num_buckets is 0).
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel
from tensorweave.kernels.string_hash import MASK, fingerprint64

_MUL = 0xC6A4A7935BD1E995
_INT64_MAX = (1 << 63) - 1


def _shift_mix(value):
    return value ^ (value >> 47)


def fingerprint_cat64(first, second):
    """TF's FingerprintCat64 on unsigned 64-bit integers."""
    result = (first ^ _MUL) & MASK
    result ^= (_shift_mix((second * _MUL) & MASK) * _MUL) & MASK
    result = (result * _MUL) & MASK
    result = (_shift_mix(result) * _MUL) & MASK
    return _shift_mix(result)


def _rows_of_sparse(indices, values, shape):
    indices = np.asarray(indices).reshape(-1, 2) if np.size(indices) else np.zeros((0, 2))
    rows = [[] for _ in range(int(np.asarray(shape).reshape(-1)[0]))]
    for (row, _), value in zip(indices.tolist(), np.asarray(values).reshape(-1).tolist()):
        if not 0 <= row < len(rows):
            raise errors.InvalidArgumentError(None, None, f"SparseCross: row index {row} out "
                                                          f"of range [0, {len(rows)})")
        rows[row].append(value)
    return rows


def _feature(value, hashed, separator):
    if hashed:
        if isinstance(value, (bytes, str)):
            return fingerprint64(value.encode() if isinstance(value, str) else value)
        return int(value) & MASK
    return value if isinstance(value, bytes) else str(int(value)).encode()


def cross_rows(columns, hashed, num_buckets, hash_key, separator=b"_X_"):
    """For each batch row, the list of its crosses (ints or bytes)."""
    batch = len(columns[0]) if columns else 0
    if any(len(column) != batch for column in columns):
        raise errors.InvalidArgumentError(None, None, "SparseCross: inputs have different "
                                                      "batch sizes")
    result = []
    for row in range(batch):
        lists = [[_feature(v, hashed, separator) for v in column[row]] for column in columns]
        crosses = [[]]
        for features in lists:  # the last input varies fastest
            crosses = [prefix + [f] for prefix in crosses for f in features]
        out = []
        for combination in crosses if all(lists) else []:
            if hashed:
                value = hash_key & MASK
                for feature in combination:
                    value = fingerprint_cat64(value, feature)
                out.append(value % num_buckets if num_buckets > 0 else value % _INT64_MAX)
            else:
                out.append(separator.join(combination))
        result.append(out)
    return result


@register_kernel("SparseCross")
def sparse_cross(*inputs, N, hashed_output, num_buckets, hash_key, sparse_types,  # noqa: N803
                 dense_types, out_type, internal_type):
    indices, values, shapes = inputs[:N], inputs[N:2 * N], inputs[2 * N:3 * N]
    dense = inputs[3 * N:]
    columns = [_rows_of_sparse(i, v, s) for i, v, s in zip(indices, values, shapes)]
    columns += [[list(row) for row in np.asarray(d).reshape(np.shape(d)[0], -1).tolist()]
                for d in dense]
    rows = cross_rows(columns, hashed_output, num_buckets, hash_key)
    out_indices = [[r, k] for r, row in enumerate(rows) for k in range(len(row))]
    flat = [value for row in rows for value in row]
    if hashed_output:
        out_values = np.asarray(flat, dtype=np.uint64).astype(np.int64) if flat else \
            np.zeros([0], np.int64)
    else:
        out_values = np.empty(len(flat), dtype=object)
        out_values[:] = flat
    width = max([len(row) for row in rows] + [0])
    return (np.asarray(out_indices, np.int64).reshape(-1, 2), out_values,
            np.asarray([len(rows), width], np.int64))
