"""`tensorflow.python.client`: `timeline` and `device_lib`."""
from tensorweave.python.client import device_lib, timeline  # noqa: F401
