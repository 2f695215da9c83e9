"""`tf.lookup.experimental`: re-exports."""
from tensorweave.ops.lookup_ops import MutableHashTable, DenseHashTable  # noqa: F401
