"""Datasets that read files: TFRecordDataset, list_files, and cache() to a file."""
import glob
import os

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_util
from tensorweave.data import structure
from tensorweave.framework import tfrecord
from tensorweave.data.dataset import Dataset
from tensorweave.data.structure import TensorSpec


class TFRecordDataset(Dataset):
    """The records of one or more TFRecord files as scalar strings. With
    num_parallel_reads=n > 1, n files are read in turn, one record from each, in the order of
    `interleave(cycle_length=n)` over the file names (deterministic; the reads themselves are
    sequential); otherwise the files are read one after another."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        super().__init__([], TensorSpec([], dtypes.string))
        self._files_dataset = None
        if isinstance(filenames, Dataset):
            self._files_dataset = filenames
            self._inputs = [filenames]
            self._filenames = None
        else:
            value = filenames if isinstance(filenames, graph_lib.Tensor) else \
                tensor_util.to_numpy(filenames, dtypes.string)
            self._filenames = self._param(value, dtypes.string)
        self._compression = tfrecord.compression_name(compression_type)
        self._cycle = max(1, int(num_parallel_reads or 1))

    def _paths(self, ctx):
        if self._files_dataset is not None:
            source = self._files_dataset._elements(ctx)
            try:
                return [_path(element[0]) for element in source]
            finally:
                source.close()
        return [_path(name) for name in np.asarray(ctx.value(self._filenames)).reshape(-1)]

    def _elements(self, ctx):
        paths = self._paths(ctx)
        for path in paths:
            if not os.path.exists(path):
                raise FileNotFoundError(f"TFRecordDataset: no file {path!r}")
        streams = (_records(path, self._compression) for path in paths)
        if self._cycle == 1:
            for stream in streams:
                yield from stream
            return
        from tensorweave.data.transformations import interleave_streams
        yield from interleave_streams(streams, self._cycle, 1)


def _records(path, compression):
    for record in tfrecord.read_records(path, compression):
        yield (np.array(record, dtype=object),)


def _path(name):
    name = name.item() if isinstance(name, np.ndarray) else name
    return name.decode() if isinstance(name, bytes) else str(name)


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
    done = filename + ".twcache"
    if os.path.exists(done):
        records = tfrecord.read_records(done)
        count = len(component_dtypes)
        while True:
            parts = [next(records, None) for _ in range(count)]
            if parts[0] is None:
                return
            yield tuple(_from_record(part) for part in parts)
    partial = f"{done}.partial-{os.getpid()}"
    writer = tfrecord.TFRecordWriter(partial)
    complete = False
    source = dataset._elements(ctx)
    try:
        for element in source:
            for component in element:
                writer.write(tensor_util.make_tensor_proto(np.asarray(component))
                             .SerializeToString())
            yield element
        complete = True
    finally:
        source.close()
        writer.close()
        if complete:
            os.replace(partial, done)
        elif os.path.exists(partial):
            os.remove(partial)


def _from_record(record):
    from tensorweave.framework.protos import graph_pb2
    return tensor_util.make_ndarray(graph_pb2.TensorProto.FromString(record))


__all__ = ["TFRecordDataset", "list_files", "file_cached", "structure"]
