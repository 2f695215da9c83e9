"""Kernels of the lookup-table ops: a table is a dict behind a lock, owned by its table op and
shared through its handle (as queues are). Keys are normalised to Python values (bytes for
strings, ints for integers) so that lookups match whatever array type carries them."""
import threading

import numpy as np

from tensorweave.framework import errors, tensor_shape
from tensorweave.kernels import file_access
from tensorweave.kernels.registry import register_kernel


def _key(value):
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _key(value.item())
        return tuple(_key(v) for v in value.tolist())   # a key of several elements
    value = value.item() if isinstance(value, np.generic) else value
    return value.encode() if isinstance(value, str) else value


def _array(values, dtype, shape):
    out = np.empty(shape, dtype=object if dtype.np_dtype == np.object_ else dtype.np_dtype)
    if len(shape) == 1:
        out[:] = values
    else:
        for i, value in enumerate(values):
            out[i] = value
    return out


class Table:
    """A dict from keys to values of `value_shape` (scalars unless the op says otherwise)."""
    static = False
    key_shape = ()

    def __init__(self, attrs):
        self.name = attrs.get("shared_name") or ""
        self.key_dtype, self.value_dtype = attrs["key_dtype"], attrs["value_dtype"]
        value_shape = attrs.get("value_shape")
        self.value_shape = tuple(tensor_shape.as_shape(value_shape).as_list()) \
            if value_shape is not None else ()
        self.entries = {}
        self.initialized = not self.static
        self.lock = threading.Lock()

    def _rows(self, keys, values, what):
        """keys and values as rows: [n, *key_shape] and [n, *value_shape]."""
        keys = np.asarray(keys)
        n = keys.size // max(1, int(np.prod(self.key_shape)))
        keys = keys.reshape((n,) + self.key_shape)
        if values is None:
            return keys, None
        values = np.asarray(values)
        if values.size != n * max(1, int(np.prod(self.value_shape))) or \
                values.shape[values.ndim - len(self.value_shape):] != self.value_shape:
            raise errors.InvalidArgumentError(None, None, f"{what}: {n} keys but values of "
                                              f"shape {list(values.shape)} (each value has "
                                              f"shape {list(self.value_shape)})")
        return keys, values.reshape((n,) + self.value_shape)

    def check_key(self, key, what):
        pass

    def find(self, keys, default):
        keys = np.asarray(keys)
        rows, _ = self._rows(keys, None, "LookupTableFindV2")
        default = np.asarray(default)
        if default.shape != self.value_shape and default.size == 1:
            default = default.reshape(())
        with self.lock:
            found = [self.lookup_one(_key(k), default) for k in rows]
        outer = keys.shape[:keys.ndim - len(self.key_shape)]
        out = _array(found, self.value_dtype, (len(found),) + self.value_shape)
        return out.reshape(outer + self.value_shape)

    def lookup_one(self, key, default):
        return self.entries.get(key, default)

    def insert(self, keys, values, what="LookupTableInsertV2"):
        keys, values = self._rows(keys, values, what)
        with self.lock:
            for k, v in zip(keys, values):
                key = _key(k)
                self.check_key(key, what)
                self.store(key, v.copy() if self.value_shape else v.item())

    def store(self, key, value):
        self.entries[key] = value

    def remove(self, keys):
        keys, _ = self._rows(keys, None, "LookupTableRemoveV2")
        with self.lock:
            for k in keys:
                key = _key(k)
                self.check_key(key, "LookupTableRemoveV2")
                self.discard(key)

    def discard(self, key):
        self.entries.pop(key, None)

    def size(self):
        with self.lock:
            return len(self.entries)

    def export(self, key_dtype, value_dtype):
        with self.lock:
            items = list(self.entries.items())
        return (_array([k for k, _ in items], key_dtype, (len(items),) + self.key_shape),
                _array([v for _, v in items], value_dtype, (len(items),) + self.value_shape))

    def import_(self, keys, values):
        with self.lock:
            self.clear()
        self.insert(keys, values, "LookupTableImportV2")

    def clear(self):
        self.entries = {}


class StaticTable(Table):
    static = True


class MutableTable(Table):
    pass


def _handle(table):
    return np.array(table.name.encode(), dtype=object)


@register_kernel("HashTableV2", resource="resource", resource_factory=StaticTable)
def hash_table(table):
    return _handle(table)


@register_kernel("MutableHashTableV2", resource="resource", resource_factory=MutableTable)
def mutable_hash_table(table):
    return _handle(table)


@register_kernel("MutableHashTableOfTensorsV2", resource="resource",
                 resource_factory=MutableTable)
def mutable_hash_table_of_tensors(table):
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
    return table.find(keys, default_value)


@register_kernel("LookupTableSizeV2", resource="resource_ref")
def lookup_table_size(table):
    return np.int64(table.size())


@register_kernel("LookupTableInsertV2", resource="resource_ref")
def lookup_table_insert(table, keys, values, *, Tin, Tout):  # noqa: N803
    table.insert(keys, values)
    return ()


@register_kernel("LookupTableRemoveV2", resource="resource_ref")
def lookup_table_remove(table, keys, *, Tin):  # noqa: N803
    table.remove(keys)
    return ()


@register_kernel("LookupTableExportV2", resource="resource_ref")
def lookup_table_export(table, *, Tkeys, Tvalues):  # noqa: N803
    return table.export(Tkeys, Tvalues)


@register_kernel("LookupTableImportV2", resource="resource_ref")
def lookup_table_import(table, keys, values, *, Tin, Tout):  # noqa: N803
    table.import_(keys, values)
    return ()
