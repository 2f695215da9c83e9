"""Lookup tables (`tf.lookup`, TF 1.x's `tf.contrib.lookup`): a table op owns a hash table
resource on its device (kernels/lookup.py) and outputs its handle; initializer, find, size,
insert, remove and export ops act on the table behind a handle, where it lives. Static tables
are filled once by their initializer op (in GraphKeys.TABLE_INITIALIZERS: run
tf.tables_initializer()); a lookup before that is a FailedPreconditionError naming the table."""
from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys, add_to_collection, name_scope
from tensorweave.framework.op_def import register_op
from tensorweave.ops import math_ops
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op, make_tensor

_KEY_TYPES = (dtypes.string, dtypes.int32, dtypes.int64)
_VALUE_TYPES = (dtypes.string, dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)
_TABLE_ATTRS = {"container": ("string", ""), "shared_name": ("string", ""),
                "key_dtype": "type", "value_dtype": "type"}

for _name in ("HashTableV2", "MutableHashTableV2"):
    register_op(_name, outputs=["table_handle: string"], attrs=dict(_TABLE_ATTRS),
                shape_fn=common_shapes.scalar, stateful=True,
                allowed_types={"key_dtype": _KEY_TYPES, "value_dtype": _VALUE_TYPES})
register_op("MutableHashTableOfTensorsV2", outputs=["table_handle: string"],
            attrs=dict(_TABLE_ATTRS, value_shape=("shape", [])),
            shape_fn=common_shapes.scalar, stateful=True,
            allowed_types={"key_dtype": _KEY_TYPES, "value_dtype": _VALUE_TYPES})
register_op("MutableDenseHashTableV2", inputs=["empty_key: key_dtype", "deleted_key: key_dtype"],
            outputs=["table_handle: string"],
            attrs=dict(_TABLE_ATTRS, value_shape=("shape", []),
                       initial_num_buckets=("int", 131072), max_load_factor=("float", 0.8)),
            shape_fn=common_shapes.scalar, stateful=True,
            allowed_types={"key_dtype": _KEY_TYPES, "value_dtype": _VALUE_TYPES})
register_op("InitializeTableV2", inputs=["table_handle: string", "keys: Tkey",
                                         "values: Tval"],
            attrs={"Tkey": "type", "Tval": "type"}, shape_fn=common_shapes.no_outputs,
            stateful=True)
register_op("InitializeTableFromTextFileV2", inputs=["table_handle: string",
                                                     "filename: string"],
            attrs={"key_index": "int", "value_index": "int", "vocab_size": ("int", -1),
                   "delimiter": ("string", "\t")}, shape_fn=common_shapes.no_outputs,
            stateful=True)


def _find_shape(op):
    """keys.shape without the key's own dimensions (dense tables), then the value's shape."""
    table, keys = op.inputs[0].op, op.inputs[1].shape
    if table.type in ("HashTableV2", "MutableHashTableV2"):
        return [keys]
    if table.type not in ("MutableHashTableOfTensorsV2", "MutableDenseHashTableV2") or \
            keys.ndims is None:
        return [tensor_shape.TensorShape(None)]
    key_rank = table.inputs[0].shape.ndims if table.type == "MutableDenseHashTableV2" else 0
    if key_rank is None:
        return [tensor_shape.TensorShape(None)]
    value_shape = tensor_shape.as_shape(table.attrs.get("value_shape") or [])
    return [tensor_shape.TensorShape(keys.dims[:keys.ndims - key_rank])
            .concatenate(value_shape)]


register_op("LookupTableFindV2", inputs=["table_handle: string", "keys: Tin",
                                         "default_value: Tout"], outputs=["values: Tout"],
            attrs={"Tin": "type", "Tout": "type"}, shape_fn=_find_shape, stateful=True)
register_op("LookupTableSizeV2", inputs=["table_handle: string"], outputs=["size: int64"],
            shape_fn=common_shapes.scalar, stateful=True)
register_op("LookupTableInsertV2", inputs=["table_handle: string", "keys: Tin",
                                           "values: Tout"],
            attrs={"Tin": "type", "Tout": "type"}, shape_fn=common_shapes.no_outputs,
            stateful=True)
register_op("LookupTableImportV2", inputs=["table_handle: string", "keys: Tin",
                                           "values: Tout"],
            attrs={"Tin": "type", "Tout": "type"}, shape_fn=common_shapes.no_outputs,
            stateful=True)
register_op("LookupTableRemoveV2", inputs=["table_handle: string", "keys: Tin"],
            attrs={"Tin": "type"}, shape_fn=common_shapes.no_outputs, stateful=True)
register_op("LookupTableExportV2", inputs=["table_handle: string"],
            outputs=["keys: Tkeys", "values: Tvalues"],
            attrs={"Tkeys": "type", "Tvalues": "type"},
            shape_fn=lambda op: [tensor_shape.TensorShape([None])] * 2, stateful=True)
for _name in ("HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2",
              "MutableDenseHashTableV2", "InitializeTableV2", "InitializeTableFromTextFileV2",
              "LookupTableFindV2", "LookupTableSizeV2", "LookupTableInsertV2",
              "LookupTableImportV2", "LookupTableRemoveV2", "LookupTableExportV2"):
    not_differentiable(_name)


class TextFileIndex:
    """Special column indices of TextFileInitializer: the whole line, or its line number."""
    WHOLE_LINE = -2
    LINE_NUMBER = -1


class KeyValueTensorInitializer:
    """Fills a table with `keys[i] -> values[i]`."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = convert_to_tensor(keys, dtype=key_dtype)
        self._values = convert_to_tensor(values, dtype=value_dtype)
        self.key_dtype, self.value_dtype = self._keys.dtype, self._values.dtype
        self._name = name

    def initialize(self, table):
        return make_op("InitializeTableV2", [table.resource_handle, self._keys, self._values],
                       name=self._name or "table_init")


class TextFileInitializer:
    """Fills a table from a text file, one entry per line: the key and value are columns
    (split by `delimiter`), the whole line (TextFileIndex.WHOLE_LINE) or the line number
    (TextFileIndex.LINE_NUMBER); `vocab_size` lines at most (the file must have that many)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None):
        self._filename = convert_to_tensor(filename, dtype=dtypes.string)
        self.key_dtype, self.value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(
            value_dtype)
        if key_index == TextFileIndex.LINE_NUMBER and self.key_dtype != dtypes.int64:
            raise ValueError("TextFileInitializer: line-number keys need key_dtype int64")
        if key_index == TextFileIndex.WHOLE_LINE and self.key_dtype != dtypes.string:
            raise ValueError("TextFileInitializer: whole-line keys need key_dtype string")
        self._attrs = {"key_index": int(key_index), "value_index": int(value_index),
                       "vocab_size": -1 if vocab_size is None else int(vocab_size),
                       "delimiter": delimiter}
        self._name = name

    def initialize(self, table):
        return make_op("InitializeTableFromTextFileV2", [table.resource_handle, self._filename],
                       self._attrs, name=self._name or "table_init")


class StaticHashTable:
    """A table filled once by `initializer`; lookups of absent keys give `default_value`."""

    def __init__(self, initializer, default_value, name=None):
        self._initializer_spec = initializer
        self.key_dtype, self.value_dtype = initializer.key_dtype, initializer.value_dtype
        self._default = convert_to_tensor(default_value, dtype=self.value_dtype)
        with name_scope(name, "hash_table") as scope:
            self.resource_handle = make_tensor(
                "HashTableV2", [], {"key_dtype": self.key_dtype,
                                    "value_dtype": self.value_dtype,
                                    "shared_name": ""}, "hash_table")
            self._init_op = initializer.initialize(self)
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, self._init_op)
        self._name = scope

    @property
    def initializer(self):
        return self._init_op

    init = initializer

    @property
    def default_value(self):
        return self._default

    @property
    def name(self):
        return self._name

    def lookup(self, keys, name=None):
        keys = convert_to_tensor(keys, dtype=self.key_dtype)
        return make_tensor("LookupTableFindV2", [self.resource_handle, keys, self._default],
                           name=name or "lookup")

    def size(self, name=None):
        return make_tensor("LookupTableSizeV2", [self.resource_handle], name=name or "size")


HashTable = StaticHashTable


class StaticVocabularyTable:
    """Keys -> ids from `initializer`; a key not in it goes to one of `num_oov_buckets` extra
    ids (vocab_size + its FarmHash Fingerprint64 bucket, as TF's)."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if num_oov_buckets < 0:
            raise ValueError(f"num_oov_buckets must be >= 0, got {num_oov_buckets}")
        self._table = StaticHashTable(initializer, -1, name=name or "vocabulary")
        self._buckets = int(num_oov_buckets)
        self.key_dtype = lookup_key_dtype or initializer.key_dtype
        self.value_dtype = dtypes.int64
        self.resource_handle = self._table.resource_handle

    @property
    def initializer(self):
        return self._table.initializer

    def size(self, name=None):
        return self._table.size(name) + self._buckets

    def lookup(self, keys, name=None):
        from tensorweave.ops.string_ops import as_string, string_to_hash_bucket_fast
        keys = convert_to_tensor(keys, dtype=self.key_dtype)
        ids = math_ops.cast(self._table.lookup(keys), dtypes.int64)
        if not self._buckets:
            return ids
        text = keys if keys.dtype == dtypes.string else as_string(keys)
        buckets = string_to_hash_bucket_fast(text, self._buckets) + self._table.size()
        return math_ops.where_v2(math_ops.equal(ids, -1), buckets, ids, name=name or "lookup")


class _MutableTable:
    """Shared by the mutable tables: insert / remove / export ops on the table's handle, and
    (checkpoint=True) a place in every Saver's checkpoint, as `<name>-keys`/`<name>-values`."""

    def _finish(self, checkpoint):
        self._name = self.resource_handle.op.name
        if checkpoint:
            add_to_collection(GraphKeys.SAVEABLE_OBJECTS, _TableSaveable(self))

    @property
    def name(self):
        return self._name

    @property
    def default_value(self):
        return self._default

    def lookup(self, keys, name=None):
        return make_tensor("LookupTableFindV2", [self.resource_handle, convert_to_tensor(
            keys, dtype=self.key_dtype), self._default], name=name or "lookup")

    def insert(self, keys, values, name=None):
        return make_op("LookupTableInsertV2", [self.resource_handle,
                                               convert_to_tensor(keys, dtype=self.key_dtype),
                                               convert_to_tensor(values, dtype=self.value_dtype)],
                       name=name or "insert")

    insert_or_assign = insert

    def remove(self, keys, name=None):
        return make_op("LookupTableRemoveV2", [self.resource_handle,
                                               convert_to_tensor(keys, dtype=self.key_dtype)],
                       name=name or "remove")

    erase = remove

    def size(self, name=None):
        return make_tensor("LookupTableSizeV2", [self.resource_handle], name=name or "size")

    def export(self, name=None):
        op = make_op("LookupTableExportV2", [self.resource_handle],
                     {"Tkeys": self.key_dtype, "Tvalues": self.value_dtype},
                     name=name or "export")
        return op.outputs[0], op.outputs[1]

    def import_(self, keys, values, name=None):
        """Replaces the whole content by these keys and values (what restoring does)."""
        return make_op("LookupTableImportV2", [self.resource_handle,
                                               convert_to_tensor(keys, dtype=self.key_dtype),
                                               convert_to_tensor(values, dtype=self.value_dtype)],
                       name=name or "import")


class MutableHashTable(_MutableTable):
    """A table changed by insert / remove ops (and read back with export). Values have the
    shape of `default_value` (scalars, or vectors and more: TF's MutableHashTableOfTensors)."""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True):
        self.key_dtype, self.value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(
            value_dtype)
        self._default = convert_to_tensor(default_value, dtype=self.value_dtype)
        attrs = {"key_dtype": self.key_dtype, "value_dtype": self.value_dtype,
                 "shared_name": ""}
        if self._default.shape.ndims:
            attrs["value_shape"] = self._default.shape
            self.resource_handle = make_tensor("MutableHashTableOfTensorsV2", [], attrs, name)
        else:
            self.resource_handle = make_tensor("MutableHashTableV2", [], attrs, name)
        self._finish(checkpoint)


class DenseHashTable(_MutableTable):
    """A mutable table in open-addressed buckets (`tf.lookup.experimental.DenseHashTable`):
    `empty_key` marks free buckets and `deleted_key` erased ones, so neither may be a key;
    keys may be vectors (the shape of empty_key), values have the shape of default_value."""

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets=None, name="MutableDenseHashTable", checkpoint=True):
        self.key_dtype, self.value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(
            value_dtype)
        self._default = convert_to_tensor(default_value, dtype=self.value_dtype)
        empty = convert_to_tensor(empty_key, dtype=self.key_dtype)
        deleted = convert_to_tensor(deleted_key, dtype=self.key_dtype)
        attrs = {"key_dtype": self.key_dtype, "value_dtype": self.value_dtype,
                 "shared_name": "", "value_shape": self._default.shape}
        if initial_num_buckets is not None:
            attrs["initial_num_buckets"] = int(initial_num_buckets)
        self.resource_handle = make_tensor("MutableDenseHashTableV2", [empty, deleted], attrs,
                                           name)
        self._finish(checkpoint)


class _TableSaveSpec:
    def __init__(self, tensor, name):
        self.tensor, self.name, self.slice_spec, self.dtype = tensor, name, "", tensor.dtype


class _TableSaveable:
    """A mutable table in a checkpoint, in the protocol Saver uses for non-variables (TF's
    SaveableObject): `specs` (name + tensor to write) and `restore(tensors, shapes)`."""

    def __init__(self, table):
        self.table, self.name, self.op = table, table.name, table.resource_handle
        with name_scope(f"{table.name}/"):
            keys, values = table.export(name="export_for_checkpoint")
        self.specs = [_TableSaveSpec(keys, f"{table.name}-keys"),
                      _TableSaveSpec(values, f"{table.name}-values")]

    def restore(self, restored_tensors, restored_shapes=None):
        keys, values = restored_tensors
        return self.table.import_(keys, values, name="restore_table")


# --- TF 1.x's tf.contrib.lookup helpers ------------------------------------------------------
def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1,
                            hasher_spec=None, dtype=dtypes.string, name=None):
    """word -> its position in `vocabulary_list` (default_value, or an OOV bucket)."""
    vocabulary = convert_to_tensor(vocabulary_list, dtype=dtype)
    from tensorweave.ops import array_ops
    ids = math_ops.cast(math_ops.range_(array_ops.size(vocabulary)), dtypes.int64)
    init = KeyValueTensorInitializer(vocabulary, ids)
    if num_oov_buckets:
        return StaticVocabularyTable(init, num_oov_buckets, name=name)
    return StaticHashTable(init, default_value, name=name)


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None,
                          default_value=-1, hasher_spec=None, key_dtype=dtypes.string,
                          name=None, key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """word (a line of the file) -> its line number."""
    init = TextFileInitializer(vocabulary_file, key_dtype, key_column_index, dtypes.int64,
                               value_column_index, vocab_size, delimiter)
    if num_oov_buckets:
        return StaticVocabularyTable(init, num_oov_buckets, name=name)
    return StaticHashTable(init, default_value, name=name)


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """id -> vocabulary_list[id] (default_value outside it)."""
    vocabulary = convert_to_tensor(vocabulary_list, dtype=dtypes.string)
    from tensorweave.ops import array_ops
    ids = math_ops.cast(math_ops.range_(array_ops.size(vocabulary)), dtypes.int64)
    return StaticHashTable(KeyValueTensorInitializer(ids, vocabulary), default_value, name=name)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK",
                                    name=None, key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE,
                                    delimiter="\t"):
    """line number -> that line of the file."""
    init = TextFileInitializer(vocabulary_file, dtypes.int64, key_column_index, dtypes.string,
                               value_column_index, vocab_size, delimiter)
    return StaticHashTable(init, default_value, name=name)
