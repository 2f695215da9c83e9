"""`tf.types.experimental` (framework/type_annotations.py). Re-exports only."""
from tensorweave.framework.type_annotations import FunctionType, TensorLike  # noqa: F401
