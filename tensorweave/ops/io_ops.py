"""Checkpoint I/O ops: SaveV2 writes tensors, RestoreV2 reads them back, MergeV2Checkpoints
joins the shards that several tasks wrote into one checkpoint (kernels/io.py,
kernels/checkpoint_format.py for the files).

They are graph ops, not client-side file writes, so that in a cluster each shard is written by
the task that owns its variables: `tf.train.Saver(sharded=True)` places one SaveV2 per device
next to the variables it saves, and one RestoreV2 per device next to the variables it fills.
`shape_and_slices` entries are TF's slice strings ("" for a whole tensor, "10 4 0,5:-" for
rows 0..4 of a [10, 4] tensor), which is how partitioned variables are saved as one tensor.
"""
from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op


def _restore_shapes(op):
    """A slice's extent is known when the slice strings are constants; a whole tensor's is not
    (the checkpoint decides), so the saver sets it from the variable."""
    specs = tensor_util.constant_value(op.inputs[2])
    count = len(op.get_attr("dtypes"))
    if specs is None:
        return [tensor_shape.unknown_shape()] * count
    shapes = []
    for spec in list(specs.reshape(-1)):
        spec = spec.decode() if isinstance(spec, bytes) else str(spec)
        if not spec:
            shapes.append(tensor_shape.unknown_shape())
            continue
        dims = spec.split()
        full = [int(d) for d in dims[:-1]]
        extent = [size if part == "-" else int(part.split(",")[1])
                  for part, size in zip(dims[-1].split(":"), full)]
        shapes.append(tensor_shape.TensorShape(extent))
    return shapes


register_op("SaveV2", inputs=["prefix: string", "tensor_names: string",
                              "shape_and_slices: string", "tensors: dtypes"],
            attrs={"dtypes": "list(type)"}, shape_fn=common_shapes.no_outputs, stateful=True,
            doc="Writes the tensors as a one-shard checkpoint at `prefix`.")
register_op("RestoreV2", inputs=["prefix: string", "tensor_names: string",
                                 "shape_and_slices: string"],
            outputs=["tensors: dtypes"], attrs={"dtypes": "list(type)"},
            shape_fn=_restore_shapes, stateful=True,
            doc="Reads the named tensors (or slices of them) from the checkpoint at `prefix`.")
register_op("MergeV2Checkpoints", inputs=["checkpoint_prefixes: string",
                                          "destination_prefix: string"],
            attrs={"delete_old_dirs": ("bool", True)}, shape_fn=common_shapes.no_outputs,
            stateful=True,
            doc="Moves one-shard checkpoints into one checkpoint and writes its index last.")
register_op("ShardedFilename", inputs=["basename: string", "shard: int32", "num_shards: int32"],
            outputs=["filename: string"], shape_fn=common_shapes.scalar,
            doc="basename-SSSSS-of-NNNNN: the name of one shard of a sharded save.")
for _name in ("SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename"):
    not_differentiable(_name)


def _strings(values, name):
    return convert_to_tensor(values, dtype=dtypes.string, name=name)


def save_v2(prefix, tensor_names, shape_and_slices, tensors, name=None):
    tensors = [convert_to_tensor(t) for t in tensors]
    return make_op("SaveV2", [prefix, _strings(tensor_names, "tensor_names"),
                              _strings(shape_and_slices, "shape_and_slices"), tensors],
                   {"dtypes": [t.dtype for t in tensors]}, name or "SaveV2")


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes_, name=None):
    op = make_op("RestoreV2", [prefix, _strings(tensor_names, "tensor_names"),
                               _strings(shape_and_slices, "shape_and_slices")],
                 {"dtypes": [dtypes.as_dtype(t) for t in dtypes_]}, name or "RestoreV2")
    return list(op.outputs)


def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, delete_old_dirs=True,
                         name=None):
    from tensorweave.ops import array_ops
    prefixes = array_ops.stack(list(checkpoint_prefixes)) if isinstance(
        checkpoint_prefixes, (list, tuple)) else checkpoint_prefixes
    return make_op("MergeV2Checkpoints", [prefixes, destination_prefix],
                   {"delete_old_dirs": delete_old_dirs}, name or "MergeV2Checkpoints")


def sharded_filename(basename, shard, num_shards, name=None):
    return make_op("ShardedFilename", [basename, convert_to_tensor(shard, dtypes.int32),
                                       convert_to_tensor(num_shards, dtypes.int32)],
                   name=name or "ShardedFilename").outputs[0]
