"""`tf.saved_model.experimental` (train/saved_model/object_save.py). Re-exports only."""
from tensorweave.train.saved_model.object_save import (TrackableResource,  # noqa: F401
                                                       VariablePolicy, save)
