"""Datasets that read files: list_files and cache() (in memory or to a file). TFRecordDataset
(defined with the other file datasets in file_datasets.py) is re-exported here."""
import glob
import os

import numpy as np

from tensorweave.framework import file_access
from tensorweave.framework import tensor_util
from tensorweave.data import structure
from tensorweave.framework import tfrecord
from tensorweave.data.dataset import Dataset
from tensorweave.data.file_datasets import TFRecordDataset  # noqa: F401 (its home module)


def list_files(file_pattern, shuffle=None, seed=None):
    """The files matching a glob pattern (or list of patterns), sorted; shuffled unless
    `shuffle` is False (TF's default)."""
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    names = sorted({name for pattern in patterns
                    for name in glob.glob(pattern.decode() if isinstance(pattern, bytes)
                                          else pattern)})
    if not names:
        raise FileNotFoundError(f"list_files(): no files match {file_pattern!r}")
    dataset = Dataset.from_tensor_slices(np.array([n.encode() for n in names], dtype=object))
    if shuffle is False:
        return dataset
    return dataset.shuffle(len(names), seed=seed)


def file_cached(dataset, ctx, filename, component_dtypes):
    """The elements of `dataset`, written to `filename` on the first complete pass and read
    back from it afterwards (each component a TensorProto record). The file appears under its
    name only once complete, so a pass cut short leaves no cache."""
    file_access.check_path("CacheDataset", filename, "w")
    done = filename + ".twcache"
    if os.path.exists(done):
        yield from read_elements(done, len(component_dtypes))
        return
    partial = f"{done}.partial-{os.getpid()}"
    writer = tfrecord.TFRecordWriter(partial)
    complete = False
    source = dataset._elements(ctx)
    try:
        for element in source:
            write_element(writer, element)
            yield element
        complete = True
    finally:
        source.close()
        writer.close()
        if complete:
            os.replace(partial, done)
        elif os.path.exists(partial):
            os.remove(partial)


def write_element(writer, element):
    """Appends an element to a TFRecord writer: one TensorProto record per component."""
    for component in element:
        writer.write(tensor_util.make_tensor_proto(np.asarray(component)).SerializeToString())


def read_elements(path, count, compression=""):
    """The elements write_element put in the TFRecord file `path` (`count` components each)."""
    from tensorweave.framework import errors
    from tensorweave.framework.protos import graph_pb2
    records = tfrecord.read_records(path, compression)
    while True:
        parts = [next(records, None) for _ in range(count)]
        if parts[0] is None:
            return
        if None in parts:
            raise errors.DataLossError(None, None, f"{path} ends inside an element")
        yield tuple(tensor_util.make_ndarray(graph_pb2.TensorProto.FromString(part))
                    for part in parts)


class CacheDataset(Dataset):
    """Keeps the elements of the first complete pass and replays them afterwards: in memory
    (filename '') or in a file. A pass that stops early caches nothing. A pipeline without
    captured tensors shares its cache across iterators; one with captured tensors (whose
    values may change at each initialization) caches per initialization."""

    def __init__(self, input_dataset, filename=""):
        super().__init__([input_dataset], input_dataset.element_spec)
        self._filename = filename
        self._memory = None

    def _cardinality(self, ctx):
        return self._inputs[0]._cardinality(ctx)

    def _elements(self, ctx):
        per_run = bool(self._inputs[0]._captures())
        if self._filename:
            yield from file_cached(self._inputs[0], ctx, self._filename,
                                           [s.dtype for s in self._flat_specs()])
            return
        cached = ctx.state.get(("cache", id(self))) if per_run else self._memory
        if cached is not None:
            yield from cached
            return
        recorded = []
        source = self._inputs[0]._elements(ctx)
        try:
            for element in source:
                recorded.append(element)
                yield element
        finally:
            source.close()
        if per_run:
            ctx.state[("cache", id(self))] = recorded
        else:
            self._memory = recorded


__all__ = ["TFRecordDataset", "list_files", "file_cached", "write_element", "read_elements",
           "CacheDataset", "structure"]
