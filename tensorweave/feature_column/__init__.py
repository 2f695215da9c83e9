"""`tf.feature_column` (L4): columns describing how a model reads its features, and the layers
that apply them. Re-exports only. sequence_input_layer is tf.contrib.feature_column's in TF
1.15 (contrib/feature_column.py re-exports it there)."""
from tensorweave.feature_column.columns import (  # noqa: F401
    numeric_column, bucketized_column, categorical_column_with_vocabulary_list,
    categorical_column_with_identity, indicator_column, embedding_column)
from tensorweave.feature_column.layers import input_layer, linear_model  # noqa: F401
from tensorweave.feature_column.parse_spec import make_parse_example_spec  # noqa: F401
from tensorweave.feature_column.columns import categorical_column_with_hash_bucket  # noqa
from tensorweave.feature_column.more_columns import (  # noqa: F401
    categorical_column_with_vocabulary_file, crossed_column, shared_embedding_columns,
    weighted_categorical_column)
from tensorweave.feature_column.sequence_columns import (  # noqa: F401
    sequence_categorical_column_with_hash_bucket, sequence_categorical_column_with_identity,
    sequence_categorical_column_with_vocabulary_file,
    sequence_categorical_column_with_vocabulary_list, sequence_numeric_column)
