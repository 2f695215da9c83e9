"""`tf.contrib.learn.datasets`: the MNIST loader, the CSV loaders and load_dataset (base).
Re-exports only."""
from tensorweave.contrib.learn.datasets import mnist  # noqa: F401
from tensorweave.contrib.learn.datasets import base  # noqa: F401
from tensorweave.contrib.learn.datasets.base import load_dataset  # noqa: F401
