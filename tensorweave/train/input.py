"""Input producers of TF 1.x queue-based pipelines: `tf.train.string_input_producer`,
`input_producer`, `range_input_producer`, `slice_input_producer`, `limit_epochs` and
`match_filenames_once`.

A producer is a FIFOQueue fed by a QueueRunner (added to the QUEUE_RUNNERS collection, started
by `tf.train.start_queue_runners`) that enqueues the whole input, shuffled each time with
`shuffle`, again and again. With `num_epochs`, a local `epochs` counter (CountUpTo) lets the
enqueue run num_epochs times; the next run raises OutOfRangeError, the runner's thread ends and
closes the queue, and consumers see OutOfRangeError once they have taken every element: each
element exactly num_epochs times. The counter is a local variable: run
`tf.local_variables_initializer()` before starting the runners.
"""
from tensorweave.framework import data_parallel
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import array_ops
from tensorweave.ops import data_flow_ops
from tensorweave.ops import debug_ops
from tensorweave.ops import math_ops
from tensorweave.ops import random_ops
from tensorweave.ops import reader_ops
from tensorweave.ops import reduction_ops
from tensorweave.ops import slicing_ops
from tensorweave.ops import state_ops
from tensorweave.ops import summary_ops
from tensorweave.ops import variables
from tensorweave.train import queue_runner


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, which may be evaluated `num_epochs` times; the next evaluation raises
    OutOfRangeError. None: no limit."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"limit_epochs: num_epochs must be > 0, got {num_epochs}")
    with graph_lib.name_scope(name, "limit_epochs", [tensor]):
        epochs = variables.Variable(constant(0, dtype=dtypes.int64), name="epochs",
                                    trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])
        counter = state_ops.count_up_to(epochs, num_epochs)
        with graph_lib.control_dependencies([counter]):
            return array_ops.identity(tensor)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A queue holding the rows of `input_tensor` (its first dimension), fed by a
    QueueRunner: all of them per epoch, shuffled each epoch if `shuffle`."""
    with graph_lib.name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(
            tensor_shape.as_shape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError(f"input_producer: the rows of input_tensor have shape "
                             f"{element_shape}; give input_tensor a fully defined shape or "
                             "pass element_shape")
        input_tensor = _input_shard(input_tensor)
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = data_flow_ops.FIFOQueue(capacity, [input_tensor.dtype], shapes=[element_shape],
                                        shared_name=shared_name, name="input_producer")
        enqueue = queue.enqueue_many([input_tensor])
        queue_runner.add_queue_runner(queue_runner.QueueRunner(queue, [enqueue],
                                                               cancel_op=cancel_op))
        if summary_name is not None:
            fullness = math_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity)
            summary_ops.scalar(summary_name, fullness)
        return queue


def _input_shard(input_tensor):
    """In transparent mode (framework/data_parallel), this rank's rows of the producer's
    input (every count-th from its index): each rank's epochs hold a disjoint share."""
    count, index = data_parallel.policy().input_shard()
    if count == 1:
        return input_tensor
    rows = input_tensor.shape[0] if input_tensor.shape.ndims else None
    rows = getattr(rows, "value", rows)
    if rows is not None and rows < count:
        raise ValueError(f"input_producer: {rows} input rows (file names?) cannot be shared "
                         f"among {count} ranks; give at least as many as there are ranks")
    return input_tensor[index::count]


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """A queue of the strings (file names, usually) of a 1-D string tensor, for a reader."""
    not_empty = "string_input_producer needs a non-empty list of strings"
    if not isinstance(string_tensor, graph_lib.Tensor) and len(string_tensor) == 0:
        raise ValueError(not_empty)
    with graph_lib.name_scope(name, "input_producer", [string_tensor]):
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        check = debug_ops.Assert(math_ops.greater(array_ops.size(string_tensor), 0),
                                 [not_empty])
        with graph_lib.control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1 (int32)."""
    with graph_lib.name_scope(name, "input_producer", [limit]):
        range_tensor = reduction_ops.range_(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full")


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of every tensor of `tensor_list` at a time (the same row of each), as a list of
    tensors; the rows are produced by a range_input_producer over the first dimension."""
    with graph_lib.name_scope(name, "input_producer", list(tensor_list)):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("slice_input_producer needs at least one tensor")
        rows = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(rows, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                     capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [slicing_ops.gather(t, index) for t in tensor_list]


def match_filenames_once(pattern, name=None):
    """A local variable holding the files that match `pattern` (a glob, or a list of them),
    listed once, when local variables are initialized."""
    return variables.Variable(reader_ops.matching_files(pattern), trainable=False,
                              name=name or "matching_filenames", validate_shape=False,
                              collections=[GraphKeys.LOCAL_VARIABLES])
