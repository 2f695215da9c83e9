"""Kernels of the checkpoint I/O ops; the file layout is in checkpoint_format.py."""
import os
import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import file_access
from tensorweave.kernels import checkpoint_format as files
from tensorweave.kernels.registry import register_kernel


def _text(value):
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _texts(values):
    return [_text(v) for v in np.asarray(values, dtype=object).reshape(-1)]


@register_kernel("SaveV2")
def save_v2(prefix, tensor_names, shape_and_slices, *tensors):
    names, specs = _texts(tensor_names), _texts(shape_and_slices)
    if not len(names) == len(specs) == len(tensors):
        raise errors.InvalidArgumentError(
            None, None, f"SaveV2: {len(names)} names, {len(specs)} slice specs and "
            f"{len(tensors)} tensors; expected one of each per tensor")
    prefix = _text(prefix)
    file_access.check_path("SaveV2", prefix, "w")
    _make_prefix_directory("SaveV2", prefix)
    files.write_checkpoint(prefix, names, specs, tensors)
    return ()


def _make_prefix_directory(op, prefix):
    """As TF's bundle writer: the prefix's own directory is created when missing (a first
    `saver.save(sess, './model/dnn.ckpt')`), but not its ancestors."""
    directory = os.path.dirname(prefix)
    if not directory or os.path.isdir(directory):
        return
    try:
        os.mkdir(directory)
    except FileExistsError:
        pass  # another shard's SaveV2 made it first
    except FileNotFoundError:
        raise errors.NotFoundError(
            None, None, f"{op}: the parent of {directory!r} does not exist; create it before "
            f"saving to {prefix!r}") from None


@register_kernel("RestoreV2")
def restore_v2(prefix, tensor_names, shape_and_slices, *, dtypes):
    prefix = _text(prefix)
    file_access.check_path("RestoreV2", prefix, "r")
    # A checkpoint saved again under the same prefix (a chief re-saving its step after a
    # recovery) is replaced file by file: a reader between the two renames sees a new data
    # file with the old index, which the checksums catch. Read again briefly before calling
    # the checkpoint corrupted (seen: an evaluator reading while the chief re-saved).
    deadline = time.monotonic() + _REWRITE_GRACE_SECONDS
    while True:
        try:
            return _restore(prefix, tensor_names, shape_and_slices, dtypes)
        except (errors.DataLossError, errors.NotFoundError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


_REWRITE_GRACE_SECONDS = 1.0


def _restore(prefix, tensor_names, shape_and_slices, dtypes):
    reader = files.CheckpointReader(prefix)
    values = []
    for name, spec, dtype in zip(_texts(tensor_names), _texts(shape_and_slices), dtypes):
        value = reader.get_tensor(name, spec)
        if value.dtype != dtype.np_dtype:
            raise errors.InvalidArgumentError(
                None, None, f"Tensor {name} is saved as {value.dtype}, the restore expects "
                f"{dtype.name}")
        values.append(value)
    return values[0] if len(values) == 1 else tuple(values)  # one output: no tuple


@register_kernel("MergeV2Checkpoints")
def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, *, delete_old_dirs):
    sources, destination = _texts(checkpoint_prefixes), _text(destination_prefix)
    for path in sources + [destination]:  # sources are renamed and deleted: writes
        file_access.check_path("MergeV2Checkpoints", path, "w")
    files.merge_checkpoints(sources, destination, delete_sources=delete_old_dirs)
    return ()


@register_kernel("ShardedFilename")
def sharded_filename(basename, shard, num_shards):
    name = f"{_text(basename)}-{int(shard):05d}-of-{int(num_shards):05d}"
    return np.array(name.encode(), dtype=object)
