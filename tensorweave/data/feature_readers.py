"""Ready-made input pipelines of tf.data.experimental: make_csv_dataset,
make_batched_features_dataset and the parse_example_dataset transformation, built (as in TF)
from list_files, interleave, shuffle/repeat, batch, map and prefetch.

Batches are dicts of feature name -> batched tensor, or (features, label) pairs with a label
key. With num_epochs=None the data repeats forever and every batch is full (the batch dimension
is static), as in TF. Column types of make_csv_dataset without column_defaults are inferred from
the first `num_rows_for_inference` rows of the files, by TF's rule: the first of int32, int64,
float32, float64, string that holds every value of the column (empty and na_value skipped).
Only FixedLenFeature / FixedLenSequenceFeature parse into dataset elements: VarLenFeature and
SparseFeature make SparseTensors, which tensorweave datasets do not hold.
"""
import csv
import glob
import io

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import tfrecord
from tensorweave.data import structure
from tensorweave.data.dataset import AUTOTUNE

_TYPE_ORDER = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string)


def _files(file_pattern, what):
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    names = sorted({name for pattern in patterns for name in glob.glob(
        pattern.decode() if isinstance(pattern, bytes) else pattern)})
    if not names:
        raise ValueError(f"{what}: no files match file_pattern {file_pattern!r}")
    return names


def _shuffle_and_repeat(dataset, num_epochs, shuffle, buffer_size, seed):
    if shuffle:
        dataset = dataset.shuffle(buffer_size, seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    return dataset


# --- parse_example_dataset ------------------------------------------------------------------------
def _check_dense_features(features, what):
    from tensorweave.ops.parsing_ops import FixedLenFeature
    from tensorweave.ops.sequence_parsing_ops import FixedLenSequenceFeature
    if not isinstance(features, dict) or not features:
        raise ValueError(f"{what}: `features` must be a non-empty dict of feature specs")
    for key, feature in features.items():
        if not isinstance(feature, (FixedLenFeature, FixedLenSequenceFeature)):
            raise ValueError(f"{what}: feature {key!r} is a {type(feature).__name__}, which "
                             "parses into a SparseTensor; tensorweave datasets hold dense "
                             "tensors only (use FixedLenFeature or FixedLenSequenceFeature)")


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """Transformation: a dataset of serialized tf.train.Example vectors (batches of strings)
    to dicts of parsed, batched dense features."""
    from tensorweave.ops.sequence_parsing_ops import parse_example
    _check_dense_features(features, "parse_example_dataset")

    def apply(dataset):
        spec = dataset.element_spec
        if structure.is_nested(spec) or spec.dtype != dtypes.string or spec.shape.ndims != 1:
            raise TypeError(f"parse_example_dataset: the input must produce vectors of "
                            f"serialized Examples (batch first), got {spec}")
        return dataset.map(lambda serialized: parse_example(serialized, features),
                           num_parallel_calls, deterministic)
    return apply


def _split_label(dataset, label_key, what):
    if label_key is None:
        return dataset
    if label_key not in dataset.element_spec:
        raise ValueError(f"{what}: label key {label_key!r} is not one of the features "
                         f"{sorted(dataset.element_spec)}")
    return dataset.map(lambda parsed: ({k: v for k, v in parsed.items() if k != label_key},
                                       parsed[label_key]))


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering=False,
                                  drop_final_batch=False):
    """Batches of parsed tf.train.Examples read from the files matching file_pattern."""
    from tensorweave.data.dataset import Dataset
    from tensorweave.data.readers import TFRecordDataset
    what = "make_batched_features_dataset"
    _check_dense_features(features, what)
    if label_key is not None and label_key not in features:
        raise ValueError(f"{what}: label_key {label_key!r} is not one of the features")
    reader = reader or TFRecordDataset
    names = _files(file_pattern, what)
    files = Dataset.from_tensor_slices(np.array([n.encode() for n in names], dtype=object))
    if shuffle:
        files = files.shuffle(len(names), shuffle_seed)
    records = files.interleave(lambda name: reader(name, *(reader_args or [])),
                               cycle_length=reader_num_threads or 1, block_length=1)
    if records.element_spec != structure.TensorSpec([], dtypes.string) and isinstance(
            records.element_spec, tuple):
        records = records.map(lambda key, value: value)  # readers of (key, value) pairs
    records = _shuffle_and_repeat(records, num_epochs, shuffle, shuffle_buffer_size,
                                  shuffle_seed)
    batches = records.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    parsed = batches.apply(parse_example_dataset(features, parser_num_threads or 1,
                                                 not sloppy_ordering))
    return _split_label(parsed, label_key, what).prefetch(prefetch_buffer_size or AUTOTUNE)


# --- make_csv_dataset -----------------------------------------------------------------------------
def _read_rows(names, compression, delim, quote, count):
    rows = []
    for name in names:
        with tfrecord._open_for_reading(name, tfrecord.compression_name(compression)) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            reader = csv.reader(text, delimiter=delim, quoting=csv.QUOTE_MINIMAL if quote
                                else csv.QUOTE_NONE)
            for row in reader:
                rows.append(row)
                if len(rows) >= count:
                    return rows
    return rows


def _fits(value, dtype):
    try:
        if dtype in (dtypes.int32, dtypes.int64):
            number = int(value)
            info = np.iinfo(dtype.np_dtype)
            return info.min <= number <= info.max
        if dtype in (dtypes.float32, dtypes.float64):
            number = float(value)
            return (dtype == dtypes.float64 or abs(number) <= float(np.finfo(np.float32).max) or
                    np.isinf(number))
    except ValueError:
        return False
    return True


def infer_column_type(values, na_value):
    """TF's inference over one column's strings (see the module docstring)."""
    chosen = 0
    for value in values:
        if value in ("", na_value):
            continue
        while not _fits(value, _TYPE_ORDER[chosen]):
            chosen += 1
    return _TYPE_ORDER[chosen]


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False):
    """Batches of CSV records as dicts column name -> batched values (and a label)."""
    from tensorweave.data.dataset import Dataset
    from tensorweave.data.file_datasets import CsvDataset
    what = "make_csv_dataset"
    names = _files(file_pattern, what)
    if column_names is None:
        if not header:
            raise ValueError(f"{what}: give column_names, or header=True to read them from "
                             "the first line")
        column_names = _read_rows(names[:1], compression_type, field_delim, use_quote_delim,
                                  1)[0]
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError(f"{what}: column_names must be unique, got {column_names}")
    if select_columns is not None:
        indices = sorted(column_names.index(c) if isinstance(c, str) else int(c)
                         for c in select_columns if not isinstance(c, str) or c in column_names)
        if len(indices) != len(select_columns) or any(not 0 <= i < len(column_names)
                                                      for i in indices):
            raise ValueError(f"{what}: select_columns {select_columns} must name or index "
                             f"columns of {column_names}")
    else:
        indices = list(range(len(column_names)))
    selected = [column_names[i] for i in indices]
    if label_name is not None and label_name not in selected:
        raise ValueError(f"{what}: label_name {label_name!r} must be one of the columns "
                         f"{selected}")
    if column_defaults is None:
        rows = _read_rows(names, compression_type, field_delim, use_quote_delim,
                          num_rows_for_inference + (1 if header else 0))[1 if header else 0:]
        column_defaults = [infer_column_type([row[i] for row in rows if i < len(row)],
                                             na_value) for i in indices]
    elif len(column_defaults) != len(indices):
        raise ValueError(f"{what}: {len(column_defaults)} column_defaults for "
                         f"{len(indices)} columns")
    files = Dataset.from_tensor_slices(np.array([n.encode() for n in names], dtype=object))
    if shuffle:
        files = files.shuffle(len(names), shuffle_seed)
    records = files.interleave(
        lambda name: CsvDataset(name, column_defaults, compression_type, None, header,
                                field_delim, use_quote_delim, na_value,
                                indices if len(indices) != len(column_names) else None),
        cycle_length=num_parallel_reads or 1, block_length=1)
    if ignore_errors:
        from tensorweave.data.element_ops import ignore_errors as ignoring
        records = records.apply(ignoring())
    records = _shuffle_and_repeat(records, num_epochs, shuffle, shuffle_buffer_size,
                                  shuffle_seed)
    batches = records.batch(batch_size, drop_remainder=num_epochs is None)

    def to_dict(*columns):
        features = dict(zip(selected, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label
    return batches.map(to_dict).prefetch(prefetch_buffer_size or AUTOTUNE)
