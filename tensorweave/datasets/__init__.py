"""`tensorweave.datasets`: dataset loaders (re-exports)."""
from tensorweave.data import mnist  # noqa: F401
