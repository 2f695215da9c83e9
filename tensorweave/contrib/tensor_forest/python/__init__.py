"""`tensorflow.contrib.tensor_forest.python`: TF 1.x's source path of tensor_forest."""
from tensorweave.contrib.tensor_forest.python import tensor_forest  # noqa: F401
