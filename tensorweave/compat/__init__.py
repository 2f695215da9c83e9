"""`tf.compat`: `tf.compat.v1` is the whole TF-1.x-shaped namespace."""
from tensorweave.compat import v1  # noqa: F401
