"""`tf.data.experimental`: the names TF 1.x scripts use from it. Re-exports only."""
from tensorweave.data.dataset import AUTOTUNE  # noqa: F401
from tensorweave.data.iterator_ops import (get_output_types, get_output_shapes,  # noqa: F401
                                           get_output_classes)
