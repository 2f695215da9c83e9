"""`tf.contrib.feature_column` (TF 1.15): the sequence columns and sequence_input_layer.
Re-exports only (tensorweave/feature_column/sequence_columns.py)."""
from tensorweave.feature_column.sequence_columns import (  # noqa: F401
    sequence_categorical_column_with_hash_bucket, sequence_categorical_column_with_identity,
    sequence_categorical_column_with_vocabulary_file,
    sequence_categorical_column_with_vocabulary_list, sequence_input_layer,
    sequence_numeric_column)
