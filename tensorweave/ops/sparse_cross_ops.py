"""SparseCross: the crosses of sparse and dense 2-D features, row by row (tf.sparse.cross,
tf.sparse.cross_hashed; feature_column.crossed_column and tf.ragged.cross build on it). Not
differentiable: its outputs are ids and strings."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.ops import math_ops
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op

TensorShape = tensor_shape.TensorShape
DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's default key of cross_hashed
_FEATURE_TYPES = (dtypes.int64, dtypes.string)

register_op("SparseCross",
            inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
                    "dense_inputs: dense_types"],
            outputs=["output_indices: int64", "output_values: out_type",
                     "output_shape: int64"],
            attrs={"N": "int", "hashed_output": "bool", "num_buckets": "int",
                   "hash_key": "int", "sparse_types": "list(type)",
                   "dense_types": "list(type)", "out_type": "type", "internal_type": "type"},
            shape_fn=lambda op: [TensorShape([None, 2]), TensorShape([None]),
                                 TensorShape([2])])
not_differentiable("SparseCross")


def _feature_tensor(value, what):
    if value.dtype == dtypes.int32:
        value = math_ops.cast(value, dtypes.int64)
    if value.dtype not in _FEATURE_TYPES:
        raise TypeError(f"{what}: features must be int64, int32 or string, got "
                        f"{value.dtype.name}")
    return value


def _cross(inputs, hashed, num_buckets, hash_key, name):
    what = "sparse.cross_hashed" if hashed else "sparse.cross"
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"{what}: inputs must be a non-empty list of SparseTensors or Tensors")
    if int(num_buckets) < 0:
        raise ValueError(f"{what}: num_buckets must be >= 0, got {num_buckets}")
    with graph_lib.name_scope(name, "SparseCross", []):
        sparse, dense = [], []
        for item in inputs:
            if isinstance(item, SparseTensorValue):
                item = SparseTensor.from_value(item)
            if isinstance(item, SparseTensor):
                if item.indices.shape.ndims == 2 and \
                        item.indices.shape.as_tuple()[1] not in (2, None):
                    raise ValueError(f"{what}: SparseTensor inputs must be 2-D")
                sparse.append(SparseTensor(item.indices, _feature_tensor(item.values, what),
                                           item.dense_shape))
            else:
                tensor = _feature_tensor(convert_to_tensor(item, name="dense_input"), what)
                if tensor.shape.ndims not in (2, None):
                    raise ValueError(f"{what}: dense inputs must be 2-D [batch, features], "
                                     f"got {tensor.shape}")
                dense.append(tensor)
        kinds = [t.values.dtype for t in sparse] + [t.dtype for t in dense]
        internal = dtypes.int64 if hashed or dtypes.string not in kinds else dtypes.string
        op = make_op("SparseCross",
                     [[t.indices for t in sparse], [t.values for t in sparse],
                      [t.dense_shape for t in sparse], dense],
                     {"N": len(sparse), "hashed_output": bool(hashed),
                      "num_buckets": int(num_buckets), "hash_key": int(hash_key),
                      "sparse_types": [t.values.dtype for t in sparse],
                      "dense_types": [t.dtype for t in dense],
                      "out_type": dtypes.int64 if hashed else dtypes.string,
                      "internal_type": internal})
        return SparseTensor(*op.outputs)


def sparse_cross(inputs, name=None, separator=None):
    """String crosses ('a_X_b'; integers in decimal) of each row's features."""
    if separator not in (None, "_X_"):
        raise ValueError("sparse.cross: only the separator '_X_' (TF 1.x) is supported")
    return _cross(inputs, False, 0, 0, name)


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Hashed crosses in [0, num_buckets) (any int64 >= 0 when num_buckets is 0)."""
    return _cross(inputs, True, num_buckets, DEFAULT_HASH_KEY if hash_key is None else hash_key,
                  name)
