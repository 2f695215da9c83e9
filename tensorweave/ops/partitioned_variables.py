"""Partitioned variables: one large variable stored as several along one axis.

`get_variable(name, shape, partitioner=p)` asks `p(shape, dtype)` how many pieces to cut each
axis into (one axis only) and creates one variable per piece, `name/part_0`, `name/part_1`,
... Under `replica_device_setter` each piece is a separate VariableV2, so the pieces spread
over the parameter-server tasks. The pieces are gathered in a `PartitionedVariable`, which
converts to the concatenated tensor wherever a Tensor is expected (matmul, gather), while
`embedding_lookup` treats the pieces as shards (`lookup_rows`): each piece gathers its own
rows on its own device and gets an IndexedSlices gradient, so only looked-up rows travel.
As in TF, its default partition_strategy "mod" reads row id // n of piece id % n; "div"
reads the rows of the concatenated variable. Every piece remembers which slice of the whole
it holds
(`_save_slice_info`), so a checkpoint stores the variable as one tensor under its own name and
restores it into any partitioning.

Partitioners (TF 1.x): `fixed_size_partitioner(num_shards)`, `min_max_variable_partitioner`
(as many pieces as keep each at least `min_slice_size` bytes, at most `max_partitions`),
`variable_axis_size_partitioner` (pieces of at most `max_shard_bytes`).
"""
import math

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import constant, register_tensor_conversion_function
from tensorweave.ops import array_ops, math_ops


class SaveSliceInfo:
    """Which slice of the variable `full_name` (of `full_shape`) a piece holds."""

    def __init__(self, full_name, full_shape, var_offset, var_shape):
        self.full_name = full_name
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)
        self.var_shape = list(var_shape)

    @property
    def spec(self):
        """TF's slice string, "10 4 0,5:0,4" (full shape, then start,length per axis)."""
        dims = ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))
        return " ".join(str(d) for d in self.full_shape) + " " + dims


class PartitionInfo:
    """What an initializer learns about the piece it fills: the whole shape and the offset."""

    def __init__(self, full_shape, var_offset):
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape):
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]

    def single_slice_dim(self, shape):
        for axis, (size, full) in enumerate(zip(shape, self.full_shape)):
            if size != full:
                return axis
        return None


class PartitionedVariable:
    """A variable stored as pieces along one axis; iterating gives the pieces."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        self._name = name
        self._shape = tensor_shape.as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._save_slice_info.var_offset)
        self._partitions = list(partitions)
        self._axis = _partition_axis(self._partitions)
        # What `sess.run(partitioned_variable)` fetches, built now: a MonitoredSession
        # finalizes the graph before anyone fetches it.
        with self.graph.as_default(), self.graph.control_dependencies(None):
            self._concat = self.as_tensor()

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        return len(self._variable_list)

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def op(self):
        return self._variable_list[0].op  # TF returns a piece's op too (for colocation)

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _get_variable_list(self):
        return list(self._variable_list)

    def _get_partitions(self):
        return list(self._partitions)

    def as_tensor(self):
        """The whole variable: its pieces concatenated along the partition axis."""
        graph = graph_lib.get_default_graph()
        with graph.name_scope(None), graph.name_scope(self._name + "/ConcatPartitions/"):
            if len(self._variable_list) == 1:
                return array_ops.identity(self._variable_list[0].value())
            return array_ops.concat([v.value() for v in self._variable_list], self._axis)

    def _as_graph_element(self):
        """What `sess.run(partitioned_variable)` fetches: the whole value."""
        return self._concat

    def assign(self, value, use_locking=None, name=None):
        raise NotImplementedError(f"Assigning a whole partitioned variable ({self._name}) is "
                                  "not supported: assign its pieces (iterate over it).")

    def __repr__(self):
        return (f"<PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} parts={len(self._variable_list)}>")


def _to_tensor(value, dtype=None, name=None):
    if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"{dtypes.as_dtype(dtype).name} for partitioned variable "
                         f"{value.name} of type {value.dtype.name}")
    return value.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _to_tensor)


def _partition_axis(partitions):
    cut = [axis for axis, count in enumerate(partitions) if count > 1]
    if len(cut) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: partitions "
                         f"{partitions}")
    return cut[0] if cut else 0


def piece_layout(shape, partitions):
    """[(offset, shape)] of the pieces: the first `size % count` pieces get one more row."""
    shape = [int(d) for d in shape]
    axis = _partition_axis(partitions)
    count = partitions[axis] if partitions else 1
    size = shape[axis] if shape else 1
    base, extra = divmod(size, count)
    pieces, start = [], 0
    for index in range(count):
        rows = base + (1 if index < extra else 0)
        offset = [0] * len(shape)
        piece_shape = list(shape)
        if shape:
            offset[axis] = start
            piece_shape[axis] = rows
        pieces.append((offset, piece_shape))
        start += rows
    return pieces


def check_partitions(name, shape, partitions):
    if not isinstance(partitions, (list, tuple)) or len(partitions) != len(shape):
        raise ValueError(f"Partitioner for {name} returned {partitions!r}; expected a list of "
                         f"{len(shape)} ints (one per dimension of {shape})")
    for count, size in zip(partitions, shape):
        if int(count) < 1 or int(count) > max(int(size), 1):
            raise ValueError(f"Partitioner for {name} returned {list(partitions)}: each count "
                             f"must be in [1, dimension size] for shape {shape}")
    _partition_axis(list(partitions))
    return [int(c) for c in partitions]


class _PieceInitializer:
    """Calls the variable's initializer for one piece, telling it where the piece lies."""

    def __init__(self, initializer, info):
        self._initializer = initializer
        self._info = info

    def __call__(self, shape, dtype=None, partition_info=None):
        return self._initializer(shape, dtype=dtype, partition_info=self._info)


def piece_initializer(initializer, full_shape, offset, piece_shape):
    """The initializer (or initial value) of one piece."""
    if initializer is None or callable(initializer):
        return None if initializer is None else _PieceInitializer(
            initializer, PartitionInfo(full_shape, offset))
    if isinstance(initializer, graph_lib.Tensor):
        return array_ops.slice_(initializer, offset, piece_shape)
    value = np.asarray(initializer)
    return value[tuple(slice(o, o + s) for o, s in zip(offset, piece_shape))]


# --- looking rows up in shards -------------------------------------------------------------
def shard_rows(shards):
    """The row count of each shard (static shapes: a lookup's layout is fixed at build time)."""
    rows = []
    for shard in shards:
        dims = tensor_shape.as_shape(shard.shape)
        if dims.ndims is None or dims.ndims < 1 or dims.dims[0] is None:
            raise ValueError(f"embedding_lookup: shard {getattr(shard, 'name', shard)} needs a "
                             f"known number of rows, got shape {dims}")
        rows.append(int(dims.dims[0]))
    return rows


def _assign_rows(ids, shards, partition_strategy):
    """(shard of each id, its row in that shard), as tensors. "mod": id lives in shard
    id % n at row id // n. "div": shards hold consecutive ranges of ids, in order, as many as
    each has rows (a partitioned variable's pieces; TF's layout, where the first
    `total % n` shards have one row more)."""
    count = len(shards)
    if partition_strategy == "mod":
        return math_ops.floormod(ids, count), math_ops.floordiv(ids, count)
    starts = np.cumsum([0] + shard_rows(shards)[:-1])
    shard = math_ops.add_n([math_ops.cast(math_ops.greater_equal(ids, int(start)), ids.dtype)
                            for start in starts[1:]]) if count > 1 else array_ops.zeros_like(ids)
    offset = array_ops.gather(constant(starts.astype(ids.dtype.np_dtype)), shard)
    return shard, ids - offset


def lookup_rows(shards, ids, partition_strategy):
    """Rows `ids` of the table stored as `shards` (Variables or Tensors; a PartitionedVariable
    gives its pieces): each shard gathers its own rows on its own device, so only the rows
    looked up travel, and the gradient of each shard is IndexedSlices of its rows."""
    graph = graph_lib.get_default_graph()
    shards = list(shards)
    if len(shards) == 1:
        with graph.colocate_with(shards[0].op):
            return array_ops.gather(shards[0], ids)
    flat = array_ops.reshape(ids, [-1])
    shard_of, row_of = _assign_rows(flat, shards, partition_strategy)
    rows, positions = [], []
    for index, shard in enumerate(shards):
        position = array_ops.squeeze(array_ops.where_indices(math_ops.equal(shard_of, index)),
                                     axis=[1])
        local = array_ops.gather(row_of, position)
        with graph.colocate_with(shard.op):
            rows.append(array_ops.gather(shard, local))
        positions.append(position)
    # The rows in shard order, each put back at its id's position (a sum over a permutation:
    # its gradient is a dense gather of the rows' gradients, which each shard's gather turns
    # into IndexedSlices of that shard).
    gathered = math_ops.unsorted_segment_sum(array_ops.concat(rows, 0),
                                             array_ops.concat(positions, 0),
                                             array_ops.size(flat))
    row_shape = array_ops.slice_(array_ops.shape(gathered), [1], [-1])
    result = array_ops.reshape(gathered, array_ops.concat([array_ops.shape(ids), row_shape], 0))
    static = tensor_shape.as_shape(ids.shape).concatenate(
        tensor_shape.as_shape(shards[0].shape)[1:])
    result.set_shape(static)
    return result


# --- partitioners -----------------------------------------------------------------------------
def fixed_size_partitioner(num_shards, axis=0):
    """Cuts `axis` into `num_shards` pieces (fewer if the axis is shorter)."""
    def partitioner(shape, dtype=None):
        shape = tensor_shape.as_shape(shape)
        if axis >= shape.ndims:
            raise ValueError(f"fixed_size_partitioner: axis {axis} is out of range for shape "
                             f"{shape}")
        partitions = [1] * shape.ndims
        partitions[axis] = min(int(num_shards), int(shape.dims[axis]))
        return partitions
    return partitioner


def _bytes_per_element(dtype, bytes_per_string_element):
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype is dtypes.string else dtype.size


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """As many pieces along `axis` as keep each at least `min_slice_size` bytes, at most
    `max_partitions` (and at most the axis length)."""
    if min_slice_size <= 0:
        raise ValueError(f"min_slice_size must be positive, got {min_slice_size}")

    def partitioner(shape, dtype):
        shape = tensor_shape.as_shape(shape)
        if axis >= shape.ndims:
            raise ValueError(f"min_max_variable_partitioner: axis {axis} is out of range for "
                             f"shape {shape}")
        total = shape.num_elements() * _bytes_per_element(dtype, bytes_per_string_element)
        partitions = [1] * shape.ndims
        partitions[axis] = max(1, min(int(shape.dims[axis]), int(max_partitions),
                                      int(math.ceil(total / min_slice_size))))
        return partitions
    return partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """Pieces along `axis` of at most `max_shard_bytes` each (capped at `max_shards`)."""
    if max_shard_bytes < 1:
        raise ValueError(f"max_shard_bytes must be positive, got {max_shard_bytes}")

    def partitioner(shape, dtype):
        shape = tensor_shape.as_shape(shape)
        size = int(shape.dims[axis])
        row_bytes = (shape.num_elements() // max(size, 1)) * _bytes_per_element(
            dtype, bytes_per_string_element)
        rows_per_shard = max(1, max_shard_bytes // max(row_bytes, 1))
        shards = int(math.ceil(size / rows_per_shard))
        if max_shards is not None:
            shards = min(shards, int(max_shards))
        partitions = [1] * shape.ndims
        partitions[axis] = max(1, min(shards, size))
        return partitions
    return partitioner
