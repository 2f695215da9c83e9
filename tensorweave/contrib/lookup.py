"""`tf.contrib.lookup`: TF 1.x's table helpers (index_table_from_file & co.). Re-exports only."""
from tensorweave.ops.lookup_ops import (HashTable, KeyValueTensorInitializer,  # noqa: F401
                                        MutableHashTable, TextFileIndex, TextFileInitializer,
                                        index_table_from_file, index_table_from_tensor,
                                        index_to_string_table_from_file,
                                        index_to_string_table_from_tensor)
from tensorweave.ops.lookup_ops import DenseHashTable as MutableDenseHashTable  # noqa: F401
