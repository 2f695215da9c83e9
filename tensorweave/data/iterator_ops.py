"""`tf.data.Iterator`: reading a dataset from a graph.

An iterator is an op owning an iterator resource (ops/dataset_ops.py, kernels/dataset.py). Its
ops run on the host CPU of the task their device scope names (an input pipeline lives beside the
worker that reads it, never on an accelerator or a parameter server's device type), and the ops
that use an iterator are colocated with it.

The dataset reaches the kernels through the registry of kernels/dataset.py, wrapped in a
`_Source` that binds the pipeline's captured tensors to the values MakeIterator receives.
"""
import copy

from tensorweave.framework import data_parallel
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.device import DeviceSpec
from tensorweave.data import functions
from tensorweave.data import options
from tensorweave.data import structure
from tensorweave.data.dataset import Dataset, IterationContext, TensorDataset
from tensorweave.data.file_datasets import _FileDataset
from tensorweave.kernels import dataset as dataset_kernels
from tensorweave.ops import dataset_ops


class _Source:
    """What the kernels see of a dataset (the protocol of kernels/dataset.py)."""

    def __init__(self, dataset):
        self.dataset = dataset
        self.captures = dataset._captures()
        self.output_types = [spec.dtype for spec in dataset._flat_specs()]
        self.description = type(dataset).__name__
        self.options = options.pipeline_options(dataset)

    def make_iterator(self, captured_values, runtime=None):
        ctx = IterationContext(dict(zip(map(id, self.captures), captured_values)), self.options,
                               runtime)
        return self.dataset._elements(ctx)


def _source_key(dataset):
    source = getattr(dataset, "_registered_source", None)
    if source is None:
        source = _Source(dataset)
        dataset._registered_source = source
    return dataset_kernels.register_dataset(source), source


def _to_host_cpu(op):
    """Moves `op` to device CPU:0 of the job/task its device scope chose (if any)."""
    if op.device:
        spec = DeviceSpec.from_string(op.device)
        if spec.device_type not in (None, "CPU") or spec.device_index not in (None, 0):
            op._set_device(spec.replace(device_type="CPU", device_index=0).to_string())
    return op


def _resources_used(dataset):
    """The table and variable ops of the pipeline's graph that the traced functions of
    `dataset` and of the datasets it reads use (mirrored in their bodies), each once."""
    found, seen, stack = [], set(), [dataset]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for value in vars(current).values():
            if isinstance(value, functions.StructuredFunction):
                ops, returned = value.resources()
                found.extend(op for op in ops if op not in found)
                if returned is not None:
                    stack.append(returned)
        stack.extend(getattr(current, "_inputs", ()))
    return found


def _beside_resources(iterator_op, used):
    """Puts the iterator and the tables and variables its dataset's functions use on one task:
    the functions run on the iterator's device against that task's resources (functions.py).
    Each run places only the ops it needs (a table is placed when tables_initializer() runs,
    without its iterator), so a colocation group is not enough: a resource without a device
    takes the iterator's, an iterator without one takes the first placed resource's task. A
    table or variable explicitly on another task than the iterator cannot be reached (TF
    would call across devices): refused here, naming both, rather than failing later as an
    uninitialised table."""
    if not used:
        return
    placed = [op for op in used if op.device]
    if not iterator_op.device and placed:
        task = DeviceSpec.from_string(placed[0].device)
        iterator_op._set_device(task.replace(device_type="CPU", device_index=0).to_string())
    if iterator_op.device:
        mine = DeviceSpec.from_string(iterator_op.device)
        for op in placed:
            theirs = DeviceSpec.from_string(op.device)
            if any(a is not None and b is not None and a != b for a, b in (
                    (mine.job, theirs.job), (mine.replica, theirs.replica),
                    (mine.task, theirs.task))):
                raise ValueError(
                    f"The dataset's functions use {op.type} {op.name} on {op.device}, but its "
                    f"iterator {iterator_op.name} runs on {iterator_op.device}: tf.data "
                    "functions run on their iterator's task and can only use its tables and "
                    "variables. Create the table or variable on that task (or without a "
                    "device), or apply it to get_next()'s output instead.")
        for op in used:
            if not op.device:
                op._set_device(iterator_op.device)
    groups = set(iterator_op.attrs.get("_class") or ())
    groups.update(f"loc:@{op.name}" for op in used)
    iterator_op._set_attr("_class", sorted(groups))


class Iterator:
    """Reads elements of a fixed structure from an iterator resource."""

    def __init__(self, handle, initializer, element_spec):
        self._handle = handle
        self._initializer = initializer
        self._element_spec = element_spec
        self._flat_types = [s.dtype for s in structure.flatten(element_spec)]
        self._flat_shapes = [s.shape for s in structure.flatten(element_spec)]
        self._string_handle = None

    # --- construction ----------------------------------------------------------------------------
    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An uninitialized iterator for any dataset of this structure (see make_initializer)."""
        spec = structure.spec_from_types_and_shapes(output_types, output_shapes)
        flat = structure.flatten(spec)
        handle = dataset_ops.iterator([s.dtype for s in flat], [s.shape for s in flat],
                                      shared_name=shared_name or "")
        _to_host_cpu(handle.op)
        return Iterator(handle, None, spec)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None):
        """An iterator whose resource is chosen at run time by a fed string handle (the value
        of another iterator's `string_handle()`): one get_next for train and test data."""
        spec = structure.spec_from_types_and_shapes(output_types, output_shapes)
        flat = structure.flatten(spec)
        handle = dataset_ops.iterator_from_string_handle(
            string_handle, [s.dtype for s in flat], [s.shape for s in flat])
        _to_host_cpu(handle.op)
        return Iterator(handle, None, spec)

    # --- properties ------------------------------------------------------------------------------
    @property
    def element_spec(self):
        return self._element_spec

    @property
    def output_types(self):
        return structure.types_of(self._element_spec)

    @property
    def output_shapes(self):
        return structure.shapes_of(self._element_spec)

    @property
    def output_classes(self):
        return structure.classes_of(self._element_spec)

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("This iterator has no initializer: it was made by "
                             "make_one_shot_iterator(), from_structure() (use "
                             "make_initializer(dataset)) or from_string_handle().")
        return self._initializer

    # --- ops -------------------------------------------------------------------------------------
    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator on `dataset`."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"make_initializer() takes a Dataset, got {type(dataset).__name__}")
        _check_compatible(self._element_spec, dataset.element_spec)
        _beside_resources(self._handle.op, _resources_used(dataset))
        key, source = _source_key(_rank_shard(dataset))
        with graph_lib.get_default_graph().colocate_with(self._handle.op):
            return dataset_ops.make_iterator(self._handle, key, source.captures, name=name)

    def get_next(self, name=None):
        """The next element (a nest of tensors); running it past the end raises
        OutOfRangeError."""
        with graph_lib.get_default_graph().colocate_with(self._handle.op):
            components = dataset_ops.iterator_get_next(self._handle, self._flat_types,
                                                       self._flat_shapes, name=name)
        return structure.pack_as(self._element_spec, components)

    def string_handle(self, name=None):
        """A scalar string naming this iterator's resource, to feed to from_string_handle."""
        if self._string_handle is None or name is not None:
            with graph_lib.get_default_graph().colocate_with(self._handle.op):
                handle = dataset_ops.iterator_to_string_handle(self._handle, name=name)
            if name is not None:
                return handle
            self._string_handle = handle
        return self._string_handle

    def _as_graph_element(self):
        return self._handle


def _check_compatible(expected, actual):
    if not structure.same_structure(expected, actual):
        raise TypeError(f"The dataset's element structure {actual} does not match the "
                        f"iterator's {expected}.")
    for want, got in zip(structure.flatten(expected), structure.flatten(actual)):
        if want.dtype != got.dtype:
            raise TypeError(f"Expected a dataset with element types "
                            f"{structure.types_of(expected)}, got one with "
                            f"{structure.types_of(actual)}.")
        if not want.shape.is_compatible_with(got.shape):
            raise TypeError(f"Expected a dataset with element shapes "
                            f"{structure.shapes_of(expected)}, got one with "
                            f"{structure.shapes_of(actual)} (incompatible).")


def shard_sources(dataset, num_shards, index):
    """`dataset` with the elements of each of its sources (slices, ranges, generators, the
    records of file datasets) cut to every `num_shards`-th from `index`, and the same
    transformations after them: the shards of one epoch are disjoint however the pipeline
    shuffles, as tf.data's auto-sharding by data. A one-element source (from_tensors) stays
    whole: every shard reads it. Transparent mode's sharding (framework/data_parallel)."""
    rebuilt = {}

    def rebuild(node):
        if id(node) in rebuilt:
            return rebuilt[id(node)]
        if isinstance(node, TensorDataset):
            result = node
        elif not node._inputs or isinstance(node, _FileDataset):
            result = node.shard(num_shards, index)
        else:
            inputs = [rebuild(child) for child in node._inputs]
            result = node
            if any(new is not old for new, old in zip(inputs, node._inputs)):
                result = copy.copy(node)  # datasets are immutable: a copy with new inputs
                result._inputs = inputs
                result.__dict__.pop("_registered_source", None)
        rebuilt[id(node)] = result
        return result

    return rebuild(dataset)


def _rank_shard(dataset):
    count, index = data_parallel.policy().input_shard()
    return dataset if count == 1 else shard_sources(dataset, count, index)


def make_one_shot_iterator(dataset):
    """An iterator that starts itself on `dataset` when first run and is never re-initialized.
    The dataset may not capture non-constant tensors (their values would have no feed)."""
    captures = dataset._captures()
    if captures:
        raise ValueError(f"make_one_shot_iterator() cannot bind tensor {captures[0].name} that "
                         "the dataset captures: use make_initializable_iterator() and feed it "
                         "when running the iterator's initializer.")
    key, _ = _source_key(_rank_shard(dataset))
    flat = dataset._flat_specs()
    handle = dataset_ops.one_shot_iterator(key, [s.dtype for s in flat], [s.shape for s in flat])
    _to_host_cpu(handle.op)
    _beside_resources(handle.op, _resources_used(dataset))
    return Iterator(handle, None, dataset.element_spec)


def make_initializable_iterator(dataset, shared_name=None, add_to_collection=True):
    """An iterator with an `initializer` op that (re)starts it on `dataset`; the function form
    (tf.data.make_initializable_iterator) also adds the initializer to the
    TABLE_INITIALIZERS collection, which session scaffolds run at start."""
    iterator = Iterator.from_structure(dataset.output_types, dataset.output_shapes,
                                       shared_name=shared_name)
    iterator._initializer = iterator.make_initializer(dataset)
    if add_to_collection:
        graph_lib.add_to_collection(graph_lib.GraphKeys.TABLE_INITIALIZERS,
                                    iterator._initializer)
    return iterator


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes
