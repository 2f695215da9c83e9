"""`tf.contrib.learn.datasets`: the MNIST loader and the CSV loaders (base). Re-exports only."""
from tensorweave.contrib.learn.datasets import mnist  # noqa: F401
from tensorweave.contrib.learn.datasets import base  # noqa: F401
