"""Kernels of the parsing ops: Example protos into arrays, raw bytes into numbers."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework.protos import example_pb2
from tensorweave.kernels.registry import register_kernel

_LIST_FIELD = {dtypes.float32: "float_list", dtypes.int64: "int64_list",
               dtypes.string: "bytes_list"}


def _decode(serialized):
    record = serialized.item() if isinstance(serialized, np.ndarray) else serialized
    try:
        return example_pb2.Example.FromString(record)
    except Exception as exc:  # protobuf's DecodeError, or a non-bytes value
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse a serialized tf.train.Example ({exc}); is this a "
            "TFRecord of Examples?") from None


def _values(feature, key, dtype):
    """The feature's values as an array of dtype (an empty array if the feature is empty)."""
    kind = feature.WhichOneof("kind")
    expected = _LIST_FIELD[dtype]
    if kind is None:
        values = []
    elif kind != expected:
        raise errors.InvalidArgumentError(
            None, None, f"Feature {key!r} holds a {kind}, but it was declared {dtype.name} "
            f"(a {expected}).")
    else:
        values = getattr(feature, kind).value
    if dtype is dtypes.string:
        array = np.empty(len(values), dtype=object)
        array[:] = list(values)
        return array
    return np.array(values, dtype=dtype.np_dtype)


def _parse_one(serialized, dense_defaults, sparse_keys, dense_keys, sparse_types, Tdense,
               dense_shapes):
    features = _decode(serialized).features.feature
    dense = []
    for key, dtype, shape, default in zip(dense_keys, Tdense, dense_shapes, dense_defaults):
        if key in features:
            values = _values(features[key], key, dtype)
            dims = shape.as_list()
            if values.size != shape.num_elements():
                raise errors.InvalidArgumentError(
                    None, None, f"Feature {key!r} has {values.size} values, but its "
                    f"FixedLenFeature shape {dims} needs {shape.num_elements()}.")
            dense.append(values.reshape(dims))
        elif np.size(default):
            dense.append(np.asarray(default))
        else:
            raise errors.InvalidArgumentError(
                None, None, f"Feature {key!r} ({dtype.name}) is required but missing from the "
                "Example; give its FixedLenFeature a default_value to allow that.")
    sparse = [_values(features[key], key, dtype) if key in features else
              np.empty(0, dtype=dtype.np_dtype) for key, dtype in zip(sparse_keys, sparse_types)]
    return dense, sparse


@register_kernel("ParseSingleExample")
def parse_single_example(serialized, *dense_defaults, num_sparse, sparse_keys, dense_keys,
                         sparse_types, Tdense, dense_shapes):
    dense, sparse = _parse_one(serialized, dense_defaults, sparse_keys, dense_keys,
                               sparse_types, Tdense, dense_shapes)
    indices = [np.arange(len(v), dtype=np.int64).reshape(-1, 1) for v in sparse]
    shapes = [np.array([len(v)], dtype=np.int64) for v in sparse]
    return tuple(indices + sparse + shapes + dense)


@register_kernel("ParseExample")
def parse_example(serialized, *dense_defaults, num_sparse, sparse_keys, dense_keys,
                  sparse_types, Tdense, dense_shapes):
    records = np.asarray(serialized, dtype=object).reshape(-1)
    parsed = [_parse_one(record, dense_defaults, sparse_keys, dense_keys, sparse_types, Tdense,
                         dense_shapes) for record in records]
    dense = [np.stack([p[0][i] for p in parsed]) if parsed else
             np.zeros([0] + shape.as_list(), dtype=dtype.np_dtype)
             for i, (dtype, shape) in enumerate(zip(Tdense, dense_shapes))]
    indices, values, shapes = [], [], []
    for i, dtype in enumerate(sparse_types):
        parts = [p[1][i] for p in parsed]
        lengths = [len(part) for part in parts]
        rows = np.repeat(np.arange(len(parts), dtype=np.int64), lengths)
        columns = np.concatenate([np.arange(n, dtype=np.int64) for n in lengths]) \
            if parts else np.zeros(0, np.int64)
        indices.append(np.stack([rows, columns], axis=1))
        values.append(np.concatenate(parts) if parts else np.empty(0, dtype.np_dtype))
        shapes.append(np.array([len(parts), max(lengths, default=0)], dtype=np.int64))
    return tuple(indices + values + shapes + dense)


@register_kernel("DecodeRaw")
def decode_raw(data, *, out_type, little_endian):
    dtype = out_type.np_dtype.newbyteorder("<" if little_endian else ">")
    items = np.asarray(data, dtype=object)
    flat = [bytes(item) for item in items.reshape(-1)]
    sizes = {len(item) for item in flat}
    if len(sizes) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"DecodeRaw needs strings of one length in a tensor, got lengths "
            f"{sorted(sizes)[:5]}.")
    if flat and next(iter(sizes)) % dtype.itemsize:
        raise errors.InvalidArgumentError(
            None, None, f"DecodeRaw: {next(iter(sizes))} bytes is not a multiple of the "
            f"{dtype.itemsize}-byte {out_type.name}.")
    width = next(iter(sizes)) // dtype.itemsize if flat else 0
    array = np.frombuffer(b"".join(flat), dtype=dtype).astype(out_type.np_dtype)
    return array.reshape(items.shape + (width,))
