"""`tf.metrics` (L4): streaming metrics as (value, update_op) pairs over local variables.
Re-exports only."""
from tensorweave.metrics.metrics_impl import (mean, accuracy, mean_squared_error,  # noqa: F401
                                              mean_absolute_error)
