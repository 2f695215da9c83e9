"""`tf.train.experimental`'s checkpoint sharding: a ShardingCallback, given in
`tf.train.CheckpointOptions(experimental_sharding_callback=...)`, decides which of a
Checkpoint's tensors go to which data file of the checkpoint.

  ShardableTensor       one tensor to save: tensor, dtype, device, name, shape,
                        slice_spec, checkpoint_key, trackable
  ShardingCallback      the base: `description`, and __call__(shardable_tensors) -> a list of
                        shards, each {checkpoint_key: {slice_spec: tensor}}
  ShardByTaskPolicy     one shard per task (job, replica, task of the tensor's device)
  MaxShardSizePolicy    shards of at most max_shard_size bytes, filled in order; a tensor
                        larger than that gets a shard of its own (TF would slice it)
Each shard is written by its own SaveV2 and the shards merged into one checkpoint, which
restores as any other (the index names every tensor's shard).
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.device import DeviceSpec
from tensorweave.ops import array_ops, control_flow_ops, io_ops


class ShardableTensor:
    __slots__ = ("_tensor_save_spec", "tensor", "dtype", "device", "name", "shape",
                 "slice_spec", "checkpoint_key", "trackable")

    def __init__(self, _tensor_save_spec, tensor, dtype, device, name, shape, slice_spec,
                 checkpoint_key, trackable):
        self._tensor_save_spec, self.tensor, self.dtype = _tensor_save_spec, tensor, dtype
        self.device, self.name, self.shape = device, name, shape
        self.slice_spec, self.checkpoint_key, self.trackable = slice_spec, checkpoint_key, \
            trackable

    def __repr__(self):
        return f"ShardableTensor({self.checkpoint_key!r}, {self.shape}, {self.dtype.name})"


class ShardingCallback:
    @property
    def description(self):
        raise NotImplementedError(f"{type(self).__name__} must define description")

    def __call__(self, shardable_tensors):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


def _shard(tensors):
    shard = {}
    for item in tensors:
        shard.setdefault(item.checkpoint_key, {})[item.slice_spec] = item.tensor
    return shard


class ShardByTaskPolicy(ShardingCallback):
    @property
    def description(self):
        return "Split tensors into shards based on their device spec task."

    def __call__(self, shardable_tensors):
        by_task = {}
        for item in shardable_tensors:
            spec = DeviceSpec.from_string(item.device or "")
            by_task.setdefault((spec.job, spec.replica, spec.task), []).append(item)
        return [_shard(group) for group in by_task.values()]


class MaxShardSizePolicy(ShardingCallback):
    def __init__(self, max_shard_size):
        if int(max_shard_size) < 1:
            raise ValueError(f"MaxShardSizePolicy: max_shard_size must be >= 1 byte, got "
                             f"{max_shard_size}")
        self.max_shard_size = int(max_shard_size)

    @property
    def description(self):
        return f"Split tensors into shards with a max shard size of {self.max_shard_size} bytes."

    def __call__(self, shardable_tensors):
        shards, current, used = [], [], 0
        for item in shardable_tensors:
            size = _bytes(item)
            if current and used + size > self.max_shard_size:
                shards.append(current)
                current, used = [], 0
            current.append(item)
            used += size
        if current:
            shards.append(current)
        return [_shard(group) for group in shards]


def _bytes(item):
    if item.dtype == dtypes.string or not item.shape.is_fully_defined():
        return 0  # not known before the save runs; packed as if small
    count = 1
    for dim in item.shape.as_list():
        count *= dim
    return count * item.dtype.size


def shardable_tensors(var_map):
    """[ShardableTensor] of a Checkpoint's {checkpoint key: variable or saveable}."""
    items = []
    for key, value in var_map.items():
        specs = getattr(value, "specs", None)
        pieces = [(spec.tensor, spec.slice_spec) for spec in specs] if specs else \
            [(value.value(), "")]
        for tensor, slice_spec in pieces:
            items.append(ShardableTensor(None, tensor, tensor.dtype.base_dtype,
                                         getattr(value, "device", tensor.device), key,
                                         tensor.shape, slice_spec, key, value))
    return items


def build_sharded_save(var_map, callback):
    """(filename placeholder, the op saving var_map's tensors in the callback's shards)."""
    items = shardable_tensors(var_map)
    shards = callback(items)
    seen = [key for shard in shards for key in shard]
    if sorted(seen) != sorted({item.checkpoint_key for item in items}):
        raise ValueError(f"{type(callback).__name__}: the shards must hold every checkpoint "
                         f"key exactly once; got {sorted(seen)}")
    graph = graph_lib.get_default_graph()
    with graph.name_scope("sharded_save"), graph.control_dependencies(None):
        prefix = array_ops.placeholder(dtypes.string, [], name="filename")
        prefixes, saves = [], []
        for index, shard in enumerate(shards):
            names = [key for key, slices in shard.items() for _ in slices]
            specs = [spec for slices in shard.values() for spec in slices]
            tensors = [tensor for slices in shard.values() for tensor in slices.values()]
            shard_prefix = io_ops.sharded_filename(prefix, index, len(shards))
            saves.append(io_ops.save_v2(shard_prefix, names, specs, tensors))
            prefixes.append(shard_prefix)
        with graph.control_dependencies(saves):
            merge = io_ops.merge_v2_checkpoints(prefixes, prefix)
        return prefix, control_flow_ops.group(merge)
