"""Datasets over files: TFRecordDataset, TextLineDataset, FixedLengthRecordDataset and
experimental.CsvDataset. Each takes one file name or several (a list, a string tensor, or a
dataset of names), read one after another, or `num_parallel_reads` files in turn (the order of
interleave(cycle_length=n), as TFRecordDataset). Compression: '' (none), 'GZIP' or 'ZLIB'."""
import csv
import io
import os

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_util
from tensorweave.framework import file_access
from tensorweave.framework import tfrecord
from tensorweave.data.dataset import Dataset
from tensorweave.data.structure import TensorSpec


class _FileDataset(Dataset):
    """The shared part: file names, compression and the interleaved reading of several files."""

    _what = "file dataset"

    def __init__(self, filenames, compression_type, num_parallel_reads, element_spec):
        super().__init__([], element_spec)
        self._files_dataset = None
        if isinstance(filenames, Dataset):
            self._files_dataset = filenames
            self._inputs = [filenames]
            self._filenames = None
        else:
            value = filenames if isinstance(filenames, graph_lib.Tensor) else \
                tensor_util.to_numpy(filenames, dtypes.string)
            self._filenames = self._param(value, dtypes.string)
        self._compression = tfrecord.compression_name(compression_type or "")
        self._cycle = max(1, int(num_parallel_reads or 1))

    def _paths(self, ctx):
        if self._files_dataset is not None:
            source = self._files_dataset._elements(ctx)
            try:
                return [_path(element[0]) for element in source]
            finally:
                source.close()
        return [_path(name) for name in np.asarray(ctx.value(self._filenames)).reshape(-1)]

    def _open(self, path):
        if not os.path.exists(path):
            raise FileNotFoundError(f"{self._what}: no file {path!r}")
        return tfrecord._open_for_reading(path, self._compression)

    def _file_elements(self, path):
        raise NotImplementedError

    def _elements(self, ctx):
        # On a server the file names come from the graph's sender: ask the policy first.
        streams = (self._file_elements(path) for path in self._paths(ctx)
                   if file_access.check_path(self._what, path, "r"))
        if self._cycle == 1:
            for stream in streams:
                yield from stream
            return
        from tensorweave.data.transformations import interleave_streams
        yield from interleave_streams(streams, self._cycle, 1)


def _path(name):
    name = name.item() if isinstance(name, np.ndarray) else name
    return name.decode() if isinstance(name, bytes) else str(name)


class TFRecordDataset(_FileDataset):
    """The records of one or more TFRecord files as scalar strings. With
    num_parallel_reads=n > 1, n files are read in turn, one record from each, in the order of
    `interleave(cycle_length=n)` over the file names (deterministic; the reads themselves are
    sequential); otherwise the files are read one after another. Every file must exist before
    the first record is read."""

    _what = "TFRecordDataset"

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        super().__init__(filenames, compression_type, num_parallel_reads,
                         TensorSpec([], dtypes.string))

    def _paths(self, ctx):
        paths = super()._paths(ctx)
        for path in paths:
            if not os.path.exists(path):
                raise FileNotFoundError(f"{self._what}: no file {path!r}")
        return paths

    def _file_elements(self, path):
        for record in tfrecord.read_records(path, self._compression):
            yield (np.array(record, dtype=object),)


class TextLineDataset(_FileDataset):
    """The lines of text files as scalar strings, without their line ends ("\\n" or
    "\\r\\n"); a last line without a newline counts."""

    _what = "TextLineDataset"

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        super().__init__(filenames, compression_type, num_parallel_reads,
                         TensorSpec([], dtypes.string))

    def _file_elements(self, path):
        with self._open(path) as handle:
            for line in handle:
                if line.endswith(b"\n"):
                    line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
                yield (np.array(line, dtype=object),)


class FixedLengthRecordDataset(_FileDataset):
    """Records of `record_bytes` bytes as scalar strings, after `header_bytes` and before
    `footer_bytes` of each file. A file whose body is not a whole number of records is an
    error naming it (TF's DataLoss)."""

    _what = "FixedLengthRecordDataset"

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None):
        super().__init__(filenames, compression_type, num_parallel_reads,
                         TensorSpec([], dtypes.string))
        self._record_bytes = int(record_bytes)
        self._header_bytes = int(header_bytes or 0)
        self._footer_bytes = int(footer_bytes or 0)
        if self._record_bytes < 1 or self._header_bytes < 0 or self._footer_bytes < 0:
            raise ValueError(f"FixedLengthRecordDataset: record_bytes ({record_bytes}) must be "
                             f"positive and header/footer bytes ({header_bytes}, "
                             f"{footer_bytes}) not negative")

    def _file_elements(self, path):
        with self._open(path) as handle:
            data = handle.read()
        body = data[self._header_bytes:len(data) - self._footer_bytes]
        if len(data) < self._header_bytes + self._footer_bytes or \
                len(body) % self._record_bytes:
            from tensorweave.framework import errors
            raise errors.DataLossError(None, None, f"FixedLengthRecordDataset: {path} has "
                                       f"{len(data)} bytes: not a header of "
                                       f"{self._header_bytes}, whole records of "
                                       f"{self._record_bytes} and a footer of "
                                       f"{self._footer_bytes}")
        for start in range(0, len(body), self._record_bytes):
            yield (np.array(body[start:start + self._record_bytes], dtype=object),)


_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


class CsvDataset(_FileDataset):
    """The records of CSV files as tuples of scalars, one per column (or per `select_cols`),
    typed by `record_defaults`: each a type (the column is required) or a default value (used
    when the field is empty or equals `na_value`). RFC 4180 quoting when `use_quote_delim`."""

    _what = "CsvDataset"

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None, exclude_cols=None):
        self._columns = [self._column_default(i, d) for i, d in enumerate(record_defaults)]
        if len(field_delim) != 1:
            raise ValueError(f"CsvDataset: field_delim must be one character, got "
                             f"{field_delim!r}")
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("CsvDataset: give select_cols or exclude_cols, not both")
        self._select = None if select_cols is None else [int(c) for c in select_cols]
        if self._select is not None:
            if sorted(set(self._select)) != self._select:
                raise ValueError(f"CsvDataset: select_cols must be increasing and unique, got "
                                 f"{select_cols}")
            if len(self._select) != len(self._columns):
                raise ValueError(f"CsvDataset: {len(self._select)} select_cols but "
                                 f"{len(self._columns)} record_defaults")
        self._exclude = set(int(c) for c in exclude_cols or ())
        specs = tuple(TensorSpec([], dtype) for dtype, _ in self._columns)
        super().__init__(filenames, compression_type, None, specs)
        self._header, self._delim = bool(header), field_delim
        self._quote, self._na_value = bool(use_quote_delim), na_value

    @staticmethod
    def _column_default(index, default):
        if isinstance(default, dtypes.DType) or (isinstance(default, type) and not isinstance(
                default, np.ndarray)):
            dtype = dtypes.as_dtype(default)
            value = None
        else:
            array = default if not isinstance(default, graph_lib.Tensor) else \
                tensor_util.constant_value(default)
            if array is None:
                raise ValueError(f"CsvDataset: record_defaults[{index}] must be a constant")
            array = np.asarray(array)
            if array.size == 0:
                dtype = dtypes.as_dtype(array.dtype) if array.dtype != object else dtypes.string
                value = None
            else:
                if array.size != 1:
                    raise ValueError(f"CsvDataset: record_defaults[{index}] must be a scalar "
                                     f"or a list of one, got shape {array.shape}")
                dtype = dtypes.as_dtype(array.dtype) if array.dtype.kind not in "OSU" else \
                    dtypes.string
                value = array.reshape(())[()]
        if dtype not in _CSV_TYPES:
            raise TypeError(f"CsvDataset: record_defaults[{index}] has type {dtype.name}; use "
                            f"one of {[t.name for t in _CSV_TYPES]}")
        return dtype, value

    def _parse(self, text, dtype, default, path, line, column):
        if text == "" or text == self._na_value:
            if default is None:
                from tensorweave.framework import errors
                raise errors.InvalidArgumentError(None, None, f"CsvDataset: {path} line {line} "
                                                  f"column {column} is empty and has no "
                                                  "default")
            text = default
        if dtype == dtypes.string:
            value = text if isinstance(text, bytes) else str(text).encode()
            return np.array(value, dtype=object)
        try:
            return np.array(text, dtype=dtype.as_numpy_dtype)
        except (TypeError, ValueError):
            from tensorweave.framework import errors
            raise errors.InvalidArgumentError(None, None, f"CsvDataset: {path} line {line} "
                                              f"column {column}: {text!r} is not a valid "
                                              f"{dtype.name}") from None

    def _file_elements(self, path):
        with self._open(path) as handle:
            text = io.TextIOWrapper(handle, encoding="utf-8", newline="")
            rows = csv.reader(text, delimiter=self._delim,
                              quoting=csv.QUOTE_MINIMAL if self._quote else csv.QUOTE_NONE)
            for number, row in enumerate(rows, start=1):
                if number == 1 and self._header:
                    continue
                if not row:
                    continue
                if self._select is not None:
                    wanted = self._select
                else:
                    wanted = [i for i in range(len(row)) if i not in self._exclude]
                if (self._select is None and len(wanted) != len(self._columns)) or \
                        (self._select is not None and wanted[-1] >= len(row)):
                    from tensorweave.framework import errors
                    raise errors.InvalidArgumentError(
                        None, None, f"CsvDataset: {path} line {number} has {len(row)} fields; "
                        f"expected {len(self._columns)} columns per record_defaults")
                yield tuple(self._parse(row[column], dtype, default, path, number, column)
                            for column, (dtype, default) in zip(wanted, self._columns))
