"""What `input_fn` gives, turned into the tensors one replica's `step_fn` receives.

`input_fn(replica_id)` (replica_id a Python int) may return:
  - a Dataset: sharded by replica (`Dataset.shard(num_replicas, replica_id)`, so the replicas
    see disjoint examples) unless the replicator was built with `shard_inputs=False`; each
    replica reads it through its own one-shot iterator;
  - an iterator (the result of make_one_shot_iterator / make_initializable_iterator): its
    `get_next()`;
  - a callable: called, its result used as the inputs (a nest of tensors);
  - tensors (e.g. an iterator's `get_next()`): used as they are.
With `input_mode="per_worker"`, `input_fn(worker_index)` is called once per process and the
replicas share what it returns: a Dataset gets one iterator and every replica calls its own
`get_next` on it, so each replica takes the next batch (nothing is sharded across the
replicas of the process, and in MultiWorkerReplicator the workers' datasets are sharded by
worker). Per-replica mode (the default) calls `input_fn` once for every replica.
"""
from tensorweave.data.dataset import Dataset
from tensorweave.data.iterator_ops import Iterator

INPUT_MODES = ("per_replica", "per_worker")


def check_mode(input_mode):
    if input_mode not in INPUT_MODES:
        raise ValueError(f"input_mode must be one of {INPUT_MODES}, got {input_mode!r}")


class InputSource:
    """Calls `input_fn` as the mode says and hands each replica its inputs."""

    def __init__(self, input_fn, input_mode, shard, num_shards, worker_index):
        if input_fn is not None and not callable(input_fn):
            raise TypeError(f"repl.run: input_fn must be callable (replica_id -> Dataset, "
                            f"iterator, callable or tensors), got {type(input_fn).__name__}")
        self.input_fn, self.input_mode, self.shard = input_fn, input_mode, shard
        self.num_shards, self.worker_index = num_shards, worker_index
        self._shared = None
        self.iterators = []

    def for_replica(self, shard_index):
        """The inputs of the replica reading shard `shard_index` (None without input_fn)."""
        if self.input_fn is None:
            return None
        if self.input_mode == "per_worker":
            if self._shared is None:
                self._shared = self._source(self.input_fn(self.worker_index), self.worker_index)
            return self._next(self._shared)
        return self._next(self._source(self.input_fn(shard_index), shard_index))

    def _source(self, value, shard_index):
        if isinstance(value, Dataset):
            if self.shard and self.num_shards > 1:
                value = value.shard(self.num_shards, shard_index)
            value = value.make_one_shot_iterator()
        if isinstance(value, Iterator):
            self.iterators.append(value)
        return value

    @staticmethod
    def _next(source):
        if isinstance(source, Iterator):
            return source.get_next()
        if callable(source):
            return source()
        return source
