"""The dense hash table (`tf.lookup.experimental.DenseHashTable`, op MutableDenseHashTableV2):
open addressing in arrays of buckets, as TF's. A slot is free while it holds `empty_key`, and
holds `deleted_key` after an erase; neither may be used as a key. The table doubles when more
than `max_load_factor` of its buckets are full. Export returns every bucket, free ones
included (their key is empty_key), like TF's."""
import zlib

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.lookup import Table, _array, _handle, _key
from tensorweave.kernels.registry import register_kernel


def _hash(key):
    # Deterministic across processes (Python's hash of bytes is salted per process).
    return zlib.crc32(repr(key).encode())


class DenseTable(Table):
    def __init__(self, attrs):
        super().__init__(attrs)
        buckets = int(attrs.get("initial_num_buckets") or 131072)
        if buckets <= 0 or buckets & (buckets - 1):
            raise errors.InvalidArgumentError(None, None, "MutableDenseHashTableV2: "
                                              "initial_num_buckets must be a power of 2, got "
                                              f"{buckets}")
        self.max_load = float(attrs.get("max_load_factor") or 0.8)
        if not 0.0 < self.max_load < 1.0:
            raise errors.InvalidArgumentError(None, None, "MutableDenseHashTableV2: "
                                              "max_load_factor must be in (0, 1), got "
                                              f"{self.max_load}")
        self.num_buckets, self.count = buckets, 0
        self.empty = self.deleted = None
        self.slots = self.values = None

    def setup(self, empty_key, deleted_key):
        with self.lock:
            if self.slots is not None:
                return
            empty_key, deleted_key = np.asarray(empty_key), np.asarray(deleted_key)
            if empty_key.shape != deleted_key.shape:
                raise errors.InvalidArgumentError(None, None, "MutableDenseHashTableV2: "
                                                  "empty_key and deleted_key have shapes "
                                                  f"{list(empty_key.shape)} and "
                                                  f"{list(deleted_key.shape)}")
            self.key_shape = empty_key.shape
            self.empty, self.deleted = _key(empty_key), _key(deleted_key)
            if self.empty == self.deleted:
                raise errors.InvalidArgumentError(None, None, "MutableDenseHashTableV2: "
                                                  "empty_key and deleted_key must differ")
            self._allocate(self.num_buckets)

    def _allocate(self, buckets):
        self.num_buckets = buckets
        self.slots = [self.empty] * buckets
        self.values = np.zeros((buckets,) + self.value_shape, dtype=object if
                               self.value_dtype.np_dtype == np.object_ else
                               self.value_dtype.np_dtype)

    def check_key(self, key, what):
        if key == self.empty or key == self.deleted:
            which = "empty_key" if key == self.empty else "deleted_key"
            raise errors.InvalidArgumentError(None, None, f"{what}: using the {which} as a "
                                              "table key is not allowed")

    def _probe(self, key):
        """(slot of key or None, slot where it would be inserted)."""
        mask, index, free = self.num_buckets - 1, _hash(key) & (self.num_buckets - 1), None
        for step in range(1, self.num_buckets + 1):
            held = self.slots[index]
            if held == key:
                return index, index
            if held == self.empty:
                return None, index if free is None else free
            if held == self.deleted and free is None:
                free = index
            index = (index + step) & mask        # triangular steps visit every slot
        return None, free

    def lookup_one(self, key, default):
        self.check_key(key, "LookupTableFindV2")
        found, _ = self._probe(key)
        return self.values[found] if found is not None else default

    def store(self, key, value):
        found, slot = self._probe(key)
        if found is None:
            if self.count + 1 > self.max_load * self.num_buckets:
                self._grow()
                found, slot = self._probe(key)
            self.count += 1
        self.slots[slot] = key
        self.values[slot] = value

    def _grow(self):
        old = [(k, v) for k, v in zip(self.slots, self.values)
               if k != self.empty and k != self.deleted]
        self._allocate(self.num_buckets * 2)
        self.count = 0
        for key, value in old:
            self.store(key, value)

    def discard(self, key):
        found, _ = self._probe(key)
        if found is not None:
            self.slots[found] = self.deleted
            self.count -= 1

    def size(self):
        with self.lock:
            return self.count

    def export(self, key_dtype, value_dtype):
        with self.lock:
            keys, values = list(self.slots), self.values.copy()
        return _array(keys, key_dtype, (len(keys),) + self.key_shape), values

    def clear(self):
        self._allocate(self.num_buckets)
        self.count = 0

    def import_(self, keys, values):
        """Takes exported buckets back (free slots included): the table gets as many buckets
        as rows given, when that is a power of 2."""
        keys, values = self._rows(keys, values, "LookupTableImportV2")
        with self.lock:
            rows = len(keys)
            self._allocate(rows if rows and not rows & (rows - 1) else self.num_buckets)
            self.count = 0
            for k, v in zip(keys, values):
                key = _key(k)
                if key != self.empty and key != self.deleted:
                    self.store(key, v.copy() if self.value_shape else v.item())


@register_kernel("MutableDenseHashTableV2", resource="resource", resource_factory=DenseTable)
def mutable_dense_hash_table(table, empty_key, deleted_key):
    table.setup(empty_key, deleted_key)
    return _handle(table)
