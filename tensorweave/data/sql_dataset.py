"""`tf.data.experimental.SqlDataset`: the rows of an SQL query as tuples of scalars.

As in TF, the only driver is "sqlite", the database is opened read-only, and every row must
have one column per entry of `output_types`; each value is converted to its column's type
(NULL reads as 0 / b""). The database file is checked against the process's file-access policy
(framework/file_access.py) before it is opened, since on a server its name comes from the graph.
"""
import sqlite3

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework import file_access
from tensorweave.data.dataset import Dataset
from tensorweave.data.structure import TensorSpec

_SUPPORTED = (dtypes.string, dtypes.bool, dtypes.int8, dtypes.int16, dtypes.int32,
              dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.float32, dtypes.float64)


def _text(value):
    value = np.asarray(value).item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


class SqlDataset(Dataset):
    """Rows of `query` run on the SQLite database `data_source_name`."""

    def __init__(self, driver_name, data_source_name, query, output_types):
        if _text(driver_name) != "sqlite":
            raise ValueError(f"SqlDataset: the database type {_text(driver_name)!r} is not "
                             "supported; driver_name must be 'sqlite'")
        types = tuple(output_types) if isinstance(output_types, (list, tuple)) else (
            output_types,)
        self._types = [dtypes.as_dtype(t) for t in types]
        for dtype in self._types:
            if dtype not in _SUPPORTED:
                raise TypeError(f"SqlDataset: output type {dtype.name} is not supported; use "
                                f"one of {[t.name for t in _SUPPORTED]}")
        super().__init__([], tuple(TensorSpec([], t) for t in self._types))
        self._source = self._param(data_source_name, dtypes.string)
        self._query = self._param(query, dtypes.string)

    def _elements(self, ctx):
        path = _text(ctx.value(self._source))
        query = _text(ctx.value(self._query))
        file_access.check_path("SqlDataset", path, "r")
        try:
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise errors.InvalidArgumentError(None, None, f"SqlDataset: cannot open the "
                                              f"database {path!r}: {exc}") from None
        try:
            try:
                cursor = connection.execute(query)
            except sqlite3.Error as exc:
                raise errors.InvalidArgumentError(None, None, f"SqlDataset: the query failed "
                                                  f"on {path!r}: {exc}") from None
            if cursor.description is None or len(cursor.description) != len(self._types):
                columns = 0 if cursor.description is None else len(cursor.description)
                raise errors.InvalidArgumentError(None, None, f"SqlDataset: the query returns "
                                                  f"{columns} columns but output_types has "
                                                  f"{len(self._types)}")
            for row in cursor:
                yield tuple(self._convert(value, dtype) for value, dtype in
                            zip(row, self._types))
        finally:
            connection.close()

    @staticmethod
    def _convert(value, dtype):
        if dtype is dtypes.string:
            if value is None:
                value = b""
            elif not isinstance(value, bytes):
                value = str(value).encode()
            return np.array(value, dtype=object)
        try:
            return np.asarray(0 if value is None else value).astype(dtype.np_dtype)
        except (TypeError, ValueError):
            raise errors.InvalidArgumentError(None, None, f"SqlDataset: the value {value!r} "
                                              f"cannot be read as {dtype.name}") from None
