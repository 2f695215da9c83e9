"""Datasets written to files: experimental.TFRecordWriter and experimental.snapshot.

Both touch files when the pipeline runs (in the session's iterator kernel), so both ask the
process's file policy first (framework/file_access.py): on a server only its allowed
directories are writable or readable, and a refusal is PermissionDeniedError naming the op
and the path.

snapshot(path) keeps one snapshot per pipeline *fingerprint* under `path`: a directory named
by a hash of the pipeline (dataset kinds, element types and shapes, constant parameters, the
code and constants of its functions), so changing the pipeline writes a new snapshot next to
the old one. The first complete pass writes `<fingerprint>/<shard>.snapshot` files (each
element's components as TensorProto records of a TFRecord file, shard chosen by shard_func,
else 0) and then `<fingerprint>/snapshot.metadata`; a pass cut short leaves no metadata and is
rewritten next time. With metadata present, iterations read the shards back in shard order.
"""
import hashlib
import os
import shutil

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework import file_access
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tfrecord
from tensorweave.data import readers
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset
from tensorweave.data.functions import StructuredFunction
from tensorweave.data.structure import TensorSpec


def _path(value, what):
    path = value.decode() if isinstance(value, bytes) else value
    if not isinstance(path, str) or not path:
        raise TypeError(f"{what}: the path must be a non-empty string, got {value!r}")
    return path


# --- TFRecordWriter ---------------------------------------------------------------------------------
class _WriteRecordsDataset(Dataset):
    """One element (the number of records written), made by writing the input's strings."""

    def __init__(self, input_dataset, filename, compression):
        super().__init__([input_dataset], TensorSpec([], dtypes.int64))
        self._filename, self._compression = filename, compression

    def _cardinality(self, ctx):
        return 1

    def _elements(self, ctx):
        path = file_access.check_path("TFRecordWriter", self._filename, "w")
        count = 0
        source = self._inputs[0]._elements(ctx)
        writer = tfrecord.TFRecordWriter(path, tfrecord.TFRecordOptions(self._compression))
        try:
            for (record,) in source:
                writer.write(bytes(np.asarray(record, dtype=object).item()))
                count += 1
        finally:
            source.close()
            writer.close()
        yield (np.int64(count),)


class TFRecordWriter:
    """Writes a dataset of scalar strings to a TFRecord file (readable by TFRecordDataset)."""

    def __init__(self, filename, compression_type=None):
        self._filename = _path(filename, "TFRecordWriter")
        self._compression = tfrecord.compression_name(compression_type)

    def write(self, dataset):
        """An op that, when run, writes every element of `dataset` to the file (replacing it)."""
        from tensorweave.data.experimental_ops import get_single_element
        from tensorweave.ops import control_flow_ops
        if not isinstance(dataset, Dataset):
            raise TypeError(f"TFRecordWriter.write: expected a Dataset, got "
                            f"{type(dataset).__name__}")
        spec = dataset.element_spec
        if structure.is_nested(spec) or spec.dtype != dtypes.string or \
                spec.shape.ndims not in (None, 0):
            raise TypeError(f"TFRecordWriter.write: the dataset must produce scalar strings, "
                            f"got {spec}")
        count = get_single_element(_WriteRecordsDataset(dataset, self._filename,
                                                        self._compression))
        return control_flow_ops.group(count, name="TFRecordWriter")


# --- snapshot -------------------------------------------------------------------------------------------
def fingerprint(dataset):
    """A hex digest that changes when the pipeline's structure, constants or functions do."""
    digest = hashlib.sha256()
    seen = set()

    def feed(value, depth=0):
        if depth > 6 or id(value) in seen:
            return
        if isinstance(value, Dataset):
            seen.add(id(value))
            digest.update(type(value).__name__.encode())
            digest.update(repr(value.element_spec).encode())
            for key in sorted(vars(value)):
                if key not in ("_registered_source", "_memory", "_attached_options"):
                    digest.update(key.encode())
                    feed(vars(value)[key], depth + 1)
        elif isinstance(value, np.ndarray):
            digest.update(repr((value.dtype, value.shape)).encode())
            digest.update(value.tobytes() if value.dtype != object else repr(
                value.tolist()).encode())
        elif isinstance(value, (int, float, str, bytes, bool, type(None), np.generic)):
            digest.update(repr(value).encode())
        elif isinstance(value, (list, tuple)):
            for item in value:
                feed(item, depth + 1)
        elif isinstance(value, dict):
            for key in sorted(value, key=repr):
                feed(key, depth + 1)
                feed(value[key], depth + 1)
        elif isinstance(value, StructuredFunction):
            feed(getattr(value, "_fn", None), depth + 1)
        elif hasattr(value, "__code__"):
            digest.update(value.__code__.co_code)
            feed(value.__code__.co_consts, depth + 1)
        elif isinstance(value, graph_lib.Tensor):
            digest.update(value.name.encode())
    feed(dataset)
    return digest.hexdigest()[:32]


class _SnapshotDataset(Dataset):
    def __init__(self, input_dataset, path, compression, shard_func):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._root = _path(path, "snapshot")
        compression = "" if compression in (None, "AUTO") else compression
        self._compression = tfrecord.compression_name(compression)
        self._shard_fn = None
        if shard_func is not None:
            self._shard_fn = StructuredFunction(shard_func, input_dataset.element_spec,
                                                "snapshot shard_func")
            out = self._shard_fn.output_spec
            if structure.is_nested(out) or not out.dtype.is_integer:
                raise TypeError(f"snapshot: `shard_func` must return a scalar integer, got {out}")
        self._directory = os.path.join(self._root, fingerprint(input_dataset))

    def _cardinality(self, ctx):
        return self._inputs[0]._cardinality(ctx)

    def _elements(self, ctx):
        directory = file_access.check_path("SnapshotDataset", self._directory, "w")
        if os.path.exists(os.path.join(directory, "snapshot.metadata")):
            yield from self._read(directory)
        else:
            yield from self._write(ctx, directory)

    def _read(self, directory):
        count = len(self._flat_specs())
        for name in sorted(n for n in os.listdir(directory) if n.endswith(".snapshot")):
            yield from readers.read_elements(os.path.join(directory, name), count,
                                             self._compression)

    def _write(self, ctx, directory):
        if os.path.isdir(directory):  # an earlier pass stopped early: start over
            shutil.rmtree(directory)
        os.makedirs(directory)
        writers = {}
        complete = False
        source = self._inputs[0]._elements(ctx)
        shard_of = None if self._shard_fn is None else self._shard_fn.bind(ctx)
        try:
            for element in source:
                shard = 0 if shard_of is None else int(shard_of(element)[0])
                if shard < 0:
                    raise errors.InvalidArgumentError(None, None, f"snapshot: shard_func "
                                                      f"returned {shard}; shards are >= 0")
                writer = writers.get(shard)
                if writer is None:
                    writer = writers[shard] = tfrecord.TFRecordWriter(
                        os.path.join(directory, f"{shard:08d}.snapshot"),
                        tfrecord.TFRecordOptions(self._compression))
                readers.write_element(writer, element)
                yield element
            complete = True
        finally:
            source.close()
            for writer in writers.values():
                writer.close()
            if complete:
                with open(os.path.join(directory, "snapshot.metadata"), "w") as metadata:
                    metadata.write(f"shards {len(writers)}\ncompression {self._compression}\n")


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """Transformation: the input, written under `path` on its first complete pass and read
    back from there afterwards (see the module docstring). reader_func, which in TF receives a
    dataset of datasets, has no counterpart here (datasets are not elements) and is refused."""
    if reader_func is not None:
        raise ValueError("snapshot: reader_func is not supported (tensorweave datasets cannot "
                         "hold datasets as elements); the shards are read back in shard order")
    return lambda dataset: _SnapshotDataset(dataset, path, compression, shard_func)
