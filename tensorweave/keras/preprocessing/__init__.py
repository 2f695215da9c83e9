"""`tf.keras.preprocessing`: re-exports."""
from tensorweave.keras.preprocessing import sequence, text  # noqa: F401
