"""Distributed input: a dataset read by the replicas of a strategy, one PerReplica value per
`get_next()`.

  split_batch=True    (experimental_distribute_dataset) one iterator per worker; each
                      element (a global batch) is split along its first dimension into one
                      slice per local replica, in replica order, as TF 1.x rebatches
  split_batch=False   (distribute_datasets_from_function, make_input_fn_iterator) one
                      iterator per worker; each local replica takes its own element (which
                      replica takes which of one step's elements is not specified, as in TF)
Between processes (InputWorkers.num_workers > 1) the dataset given to
experimental_distribute_dataset is sharded by worker: worker i reads elements i, i+W, ...
(a dataset_fn shards itself through its InputContext). A batch whose size is known when the
graph is built must divide by the number of local replicas.
"""
from tensorweave.data.dataset import Dataset
from tensorweave.distribute.values import PerReplica
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import nest
from tensorweave.ops import array_ops, slicing_ops


class InputWorkers:
    """This process's replica devices and its place among the workers."""

    def __init__(self, devices, num_workers=1, worker_index=0):
        self.devices = tuple(devices)
        self.num_workers, self.worker_index = int(num_workers), int(worker_index)


class DistributedDataset:
    def __init__(self, dataset, workers, split_batch):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"expected a tf.data.Dataset, got {type(dataset).__name__}")
        if split_batch and workers.num_workers > 1:
            dataset = dataset.shard(workers.num_workers, workers.worker_index)
        self._dataset, self._workers, self._split = dataset, workers, split_batch

    def make_one_shot_iterator(self):
        return DistributedIterator(self._dataset.make_one_shot_iterator(), self._workers,
                                   self._split)

    def make_initializable_iterator(self):
        return DistributedIterator(self._dataset.make_initializable_iterator(), self._workers,
                                   self._split)

    def __iter__(self):
        raise RuntimeError("iterating a distributed dataset needs eager execution; in graph "
                           "mode use make_one_shot_iterator() or make_initializable_iterator() "
                           "and get_next()")


class DistributedIterator:
    def __init__(self, iterator, workers, split_batch):
        self._iterator, self._workers, self._split = iterator, workers, split_batch

    @property
    def initializer(self):
        return self._iterator.initializer

    def initialize(self):
        """The ops that (re)start the iterator, as a list (TF 1.x's API)."""
        return [self._iterator.initializer]

    def get_next(self, name=None):
        """The next element of every local replica: a nest of PerReplica values."""
        count = len(self._workers.devices)
        if not self._split:
            elements = [self._iterator.get_next() for _ in range(count)]
            flat = [nest.flatten(element) for element in elements]
            return nest.pack_sequence_as(elements[0], [PerReplica(parts)
                                                       for parts in zip(*flat)])
        element = self._iterator.get_next(name=name)
        return nest.map_structure(lambda t: PerReplica(_split(t, count)), element)


def split_rows(tensor, count):
    """`tensor`'s rows in `count` consecutive slices, in replica order."""
    return _split(tensor, count)


def _split(tensor, count):
    if count == 1:
        return (tensor,)
    rows = tensor.shape.as_list()[0] if tensor.shape.ndims else None
    if tensor.shape.ndims == 0:
        raise ValueError("experimental_distribute_dataset: the dataset's elements must be "
                         f"batches (rank >= 1) to split among {count} replicas; got a scalar")
    if rows is not None and rows % count:
        raise ValueError(f"experimental_distribute_dataset: a batch of {rows} cannot be split "
                         f"evenly among {count} replicas: make the global batch size a "
                         f"multiple of {count} (e.g. batch(..., drop_remainder=True))")
    with graph_lib.name_scope("split_batch"):
        if rows is not None:
            return tuple(slicing_ops.split(tensor, count, axis=0))
        # A batch size known only at run time (a final short batch): replica i takes rows
        # [i*n//count, (i+1)*n//count), so no example is dropped.
        total = array_ops.shape(tensor)[0]
        bounds = [(total * i) // count for i in range(count + 1)]
        return tuple(tensor[bounds[i]:bounds[i + 1]] for i in range(count))
