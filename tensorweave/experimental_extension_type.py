"""`tf.experimental.extension_type` (data/extension_types.py). Re-exports only."""
from tensorweave.data.extension_types import as_dict  # noqa: F401
