"""`tf.contrib.data`: the TF 1.3/1.4 names of the input pipeline, on tensorweave.data. The
Dataset and Iterator classes are tf.data's; the transformations are functions for
`Dataset.apply` built from Dataset methods.

The grouping, resampling and error-skipping transformations (group_by_window,
bucket_by_sequence_length, group_by_reducer/Reducer, rejection_resample, ignore_errors) are
tf.data.experimental's, which kept TF 1.x contrib's signatures.

Not mapped: TF 1.3's `Dataset.map(num_threads=, output_buffer_size=)` keywords (use
num_parallel_calls= and .prefetch()), and dense_to_sparse_batch (datasets hold dense tensors).
"""
from tensorweave.data.dataset import Dataset  # noqa: F401
from tensorweave.data.iterator_ops import Iterator  # noqa: F401
from tensorweave.data.readers import TFRecordDataset  # noqa: F401
# TF 1.4 kept the file readers under contrib.data too (deprecated aliases of tf.data's).
from tensorweave.data.file_datasets import TextLineDataset, FixedLengthRecordDataset  # noqa: F401
from tensorweave.data.grouping import (group_by_window, bucket_by_sequence_length,  # noqa: F401
                                       group_by_reducer, Reducer)
from tensorweave.data.element_ops import ignore_errors, rejection_resample  # noqa: F401
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import constant

_COUNT_FOREVER = 2 ** 62  # Dataset.range needs a stop; no pipeline runs this long


def batch_and_drop_remainder(batch_size):
    """Batches of exactly `batch_size` elements; a short final batch is dropped."""
    return lambda dataset: dataset.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    return lambda dataset: dataset.padded_batch(batch_size, padded_shapes, padding_values,
                                                drop_remainder=True)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """Shuffles, then repeats `count` times (forever when None), reshuffling each epoch."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """map(map_func) then batch(batch_size)."""
    return lambda dataset: dataset.map(map_func, num_parallel_calls).batch(
        batch_size, drop_remainder=drop_remainder)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """interleave(map_func, cycle_length, block_length); the order is deterministic (what
    sloppy=False promises, and an allowed order when sloppy=True)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def sloppy_interleave(map_func, cycle_length, block_length=1):
    return parallel_interleave(map_func, cycle_length, block_length, sloppy=True)


def Counter(start=0, step=1, dtype=dtypes.int64):  # noqa: N802 - TF's name
    """start, start + step, start + 2 step, ... without end."""
    if step == 0:
        return Dataset.from_tensors(constant(start, dtype=dtype)).repeat()
    return Dataset.range(start, start + step * _COUNT_FOREVER, step, output_type=dtype)


def enumerate_dataset(start=0):
    """(index, element) pairs, counting from `start`."""
    return lambda dataset: Dataset.zip((Counter(start), dataset))
