"""NumPy arrays <-> TensorProto, and static constant folding for shape functions."""
import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.protos import graph_pb2


def shape_to_proto(shape):
    shape = tensor_shape.as_shape(shape)
    proto = graph_pb2.TensorShapeProto()
    if shape.ndims is None:
        proto.unknown_rank = True
        return proto
    for dim in shape.as_tuple():
        proto.dim.add().size = -1 if dim is None else dim
    return proto


def shape_from_proto(proto):
    if proto.unknown_rank:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([None if d.size < 0 else d.size for d in proto.dim])


def make_tensor_proto(values, dtype=None, shape=None):
    """A TensorProto holding `values`: raw little-endian bytes for numbers, a list for strings."""
    array = to_numpy(values, dtype)
    if shape is not None:
        array = np.broadcast_to(array, tuple(shape)) if array.size == 1 else array.reshape(shape)
    proto = graph_pb2.TensorProto()
    tw_dtype = dtypes.as_dtype(array.dtype)
    proto.dtype = tw_dtype.as_datatype_enum
    proto.tensor_shape.CopyFrom(shape_to_proto(array.shape))
    if tw_dtype is dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode()
                                for v in array.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")) \
            .tobytes()
    return proto


def make_ndarray(proto):
    """The NumPy array a TensorProto holds (a fresh, writable array)."""
    dtype = dtypes.as_dtype(proto.dtype)
    shape = shape_from_proto(proto.tensor_shape).as_list()
    if dtype is dtypes.string:
        return np.array(list(proto.string_val), dtype=object).reshape(shape)
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.size
    if len(proto.tensor_content) != expected:
        raise ValueError(f"TensorProto of {dtype.name}{shape} needs {expected} bytes, has "
                         f"{len(proto.tensor_content)}")
    array = np.frombuffer(proto.tensor_content, dtype=dtype.np_dtype.newbyteorder("<"))
    return array.astype(dtype.np_dtype).reshape(shape)


def to_numpy(values, dtype=None):
    """Converts a Python/NumPy value to an array of `dtype` (TF's rules for Python defaults)."""
    np_dtype = None if dtype is None else dtypes.as_dtype(dtype).np_dtype
    if isinstance(values, np.ndarray) and np_dtype is None:
        return values
    if np_dtype is None:
        array = np.asarray(values)
        if array.dtype == np.float64 and not _is_numpy_typed(values):
            array = array.astype(np.float32)
        elif array.dtype == np.int64 and not _is_numpy_typed(values):
            if array.size == 0 or (array.min() >= -2**31 and array.max() < 2**31):
                array = array.astype(np.int32)
        elif array.dtype.kind in "SUO":
            array = _encode_strings(array)
        return array
    if np_dtype == np.object_:
        return _encode_strings(np.asarray(values, dtype=object))
    array = np.asarray(values)
    if array.dtype.kind == "f" and np.dtype(np_dtype).kind in "iub" and array.size:
        if not np.all(np.equal(np.mod(array, 1), 0)):
            raise TypeError(f"Expected {dtypes.as_dtype(np_dtype).name}, got {values!r} with "
                            "fractional values")
    if array.dtype.kind in "iu" and np.dtype(np_dtype).kind in "iu" and array.size:
        info = np.iinfo(np_dtype)
        if array.min() < info.min or array.max() > info.max:
            raise ValueError(f"Value {values!r} is out of range for "
                             f"{dtypes.as_dtype(np_dtype).name}")
    if array.dtype.kind == "b" and np.dtype(np_dtype).kind != "b":
        raise TypeError(f"Expected {dtypes.as_dtype(np_dtype).name}, got bool value {values!r}")
    if array.dtype.kind in "fiu" and np.dtype(np_dtype).kind == "b":
        raise TypeError(f"Expected bool, got {values!r} of type {array.dtype}")
    return array.astype(np_dtype, copy=False)


def _encode_strings(array):
    """String tensors hold bytes, as in TF: str elements are UTF-8 encoded."""
    flat = [v.encode() if isinstance(v, str) else v for v in array.reshape(-1).tolist()]
    for item in flat:
        if not isinstance(item, bytes):
            raise TypeError(f"Expected bytes or str for a string tensor, got {item!r}")
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(array.shape)


def _is_numpy_typed(values):
    """Only a NumPy array or scalar keeps its 64-bit dtype; a list of NumPy scalars (e.g.
    [np.argmax(row) for row in counts]) infers like Python numbers, as TF 1.x's
    make_tensor_proto does (np.array(values), then int32/float32 when that loses nothing)."""
    return isinstance(values, (np.ndarray, np.generic))


# Ops whose output value can be computed at graph-build time from constant inputs.
_CONSTANT_FOLDERS = {}


def register_constant_folder(op_type, fn):
    """`fn(op, input_values) -> ndarray or None`; input_values are folded inputs or None."""
    _CONSTANT_FOLDERS[op_type] = fn


def constant_value(tensor):
    """The value of `tensor` if it can be known without running the graph, else None."""
    op = tensor.op
    if op.type == "Const":
        return op.get_attr("value")
    if op.type == "Shape" and tensor.op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=op.get_attr("out_type").np_dtype)
    folder = _CONSTANT_FOLDERS.get(op.type)
    if folder is None:
        return None
    values = [constant_value(t) for t in op.inputs]
    return folder(op, values)


def constant_value_as_shape(tensor):
    """A TensorShape for a 1-D shape tensor, with unknown dims where the value is not static."""
    value = constant_value(tensor)
    if value is not None:
        return tensor_shape.TensorShape([None if d == -1 else int(d) for d in value.reshape(-1)])
    if tensor.op.type == "Pack":
        dims = []
        for item in tensor.op.inputs:
            item_value = constant_value(item)
            dims.append(None if item_value is None or int(item_value) < 0 else int(item_value))
        return tensor_shape.TensorShape(dims)
    rank = tensor.shape.as_tuple()
    if rank is not None and len(rank) == 1 and rank[0] is not None:
        return tensor_shape.unknown_shape(rank[0])
    return tensor_shape.unknown_shape()
