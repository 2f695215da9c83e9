"""Kernels of the lookup-table ops: a table is a dict behind a lock, owned by its table op and
shared through its handle (as queues are). Keys are normalised to Python values (bytes for
strings, ints for integers) so that lookups match whatever array type carries them."""
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import file_access
from tensorweave.kernels.registry import register_kernel


class Table:
    def __init__(self, attrs):
        self.name = attrs.get("shared_name") or ""
        self.key_dtype, self.value_dtype = attrs["key_dtype"], attrs["value_dtype"]
        self.entries = {}
        self.initialized = False
        self.lock = threading.Lock()


class StaticTable(Table):
    static = True


class MutableTable(Table):
    static = False

    def __init__(self, attrs):
        super().__init__(attrs)
        self.initialized = True


def _key(value):
    value = value.item() if isinstance(value, np.generic) else value
    return value.encode() if isinstance(value, str) else value


def _handle(table):
    return np.array(table.name.encode(), dtype=object)


@register_kernel("HashTableV2", resource="resource", resource_factory=StaticTable)
def hash_table(table):
    return _handle(table)


@register_kernel("MutableHashTableV2", resource="resource", resource_factory=MutableTable)
def mutable_hash_table(table):
    return _handle(table)


def _fill(table, keys, values, what):
    keys, values = np.asarray(keys).reshape(-1), np.asarray(values).reshape(-1)
    if keys.shape != values.shape:
        raise errors.InvalidArgumentError(None, None, f"{what}: {keys.size} keys but "
                                          f"{values.size} values")
    with table.lock:
        if table.initialized and table.static:
            return  # initialising an initialised static table is a no-op, as in TF
        table.entries = {_key(k): v for k, v in zip(keys.tolist(), values.tolist())}
        table.initialized = True


@register_kernel("InitializeTableV2", resource="resource_ref")
def initialize_table(table, keys, values):
    _fill(table, keys, values, "InitializeTableV2")
    return ()


@register_kernel("InitializeTableFromTextFileV2", resource="resource_ref")
def initialize_table_from_text_file(table, filename, *, key_index, value_index, vocab_size,
                                    delimiter):
    path = file_access.as_path(filename)
    text = file_access.read_input(path, "InitializeTableFromTextFileV2")
    lines = text.decode("utf-8").splitlines()
    if vocab_size >= 0:
        if len(lines) < vocab_size:
            raise errors.InvalidArgumentError(None, None, f"Invalid vocab_size in {path}: "
                                              f"expected {vocab_size} lines, found "
                                              f"{len(lines)}")
        lines = lines[:vocab_size]

    def column(line, number, index, dtype):
        if index == -1:
            return number
        field = line if index == -2 else _split(line, delimiter, index, path, number)
        if dtype.is_integer:
            try:
                return int(field)
            except ValueError:
                raise errors.InvalidArgumentError(None, None, f"{path} line {number}: "
                                                  f"{field!r} is not an integer") from None
        if dtype.is_floating:
            return float(field)
        return field.encode()

    keys = [column(line, n, key_index, table.key_dtype) for n, line in enumerate(lines)]
    values = [column(line, n, value_index, table.value_dtype) for n, line in enumerate(lines)]
    _fill(table, np.array(keys, dtype=object), np.array(values, dtype=object),
          "InitializeTableFromTextFileV2")
    return ()


def _split(line, delimiter, index, path, number):
    fields = line.split(delimiter)
    if index >= len(fields):
        raise errors.InvalidArgumentError(None, None, f"{path} line {number} has "
                                          f"{len(fields)} columns, no column {index}")
    return fields[index]


@register_kernel("LookupTableFindV2", resource="resource_ref")
def lookup_table_find(table, keys, default_value, *, Tin, Tout):  # noqa: N803
    if not table.initialized:
        raise errors.FailedPreconditionError(None, None, f"Table {table.name} not "
                                             "initialized: run tf.tables_initializer() (or "
                                             "the table's initializer) first")
    keys = np.asarray(keys)
    default = np.asarray(default_value).reshape(()).item() if np.size(default_value) == 1 \
        else default_value
    with table.lock:
        found = [table.entries.get(_key(k), default) for k in keys.reshape(-1).tolist()]
    dtype = object if Tout.np_dtype == np.object_ else Tout.np_dtype
    out = np.empty(len(found), dtype=dtype)
    out[:] = found
    return out.reshape(keys.shape)


@register_kernel("LookupTableSizeV2", resource="resource_ref")
def lookup_table_size(table):
    with table.lock:
        return np.int64(len(table.entries))


@register_kernel("LookupTableInsertV2", resource="resource_ref")
def lookup_table_insert(table, keys, values, *, Tin, Tout):  # noqa: N803
    keys, values = np.asarray(keys).reshape(-1), np.asarray(values).reshape(-1)
    if keys.shape != values.shape:
        raise errors.InvalidArgumentError(None, None, f"LookupTableInsertV2: {keys.size} keys "
                                          f"but {values.size} values")
    with table.lock:
        for k, v in zip(keys.tolist(), values.tolist()):
            table.entries[_key(k)] = v
    return ()


@register_kernel("LookupTableRemoveV2", resource="resource_ref")
def lookup_table_remove(table, keys, *, Tin):  # noqa: N803
    with table.lock:
        for k in np.asarray(keys).reshape(-1).tolist():
            table.entries.pop(_key(k), None)
    return ()


@register_kernel("LookupTableExportV2", resource="resource_ref")
def lookup_table_export(table, *, Tkeys, Tvalues):  # noqa: N803
    with table.lock:
        items = list(table.entries.items())
    keys = np.empty(len(items), dtype=object if Tkeys.np_dtype == np.object_ else Tkeys.np_dtype)
    values = np.empty(len(items), dtype=object if Tvalues.np_dtype == np.object_
                      else Tvalues.np_dtype)
    keys[:] = [k for k, _ in items]
    values[:] = [v for _, v in items]
    return keys, values
