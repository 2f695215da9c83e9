"""Where the tests find MNIST (../shared/data/mnist beside the checkout); tests skip without it."""
import os

import pytest

MNIST_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data",
                                         "mnist"))


def require_mnist():
    if not os.path.exists(os.path.join(MNIST_DIR, "t10k-images-idx3-ubyte.gz")):
        pytest.skip(f"MNIST files not found in {MNIST_DIR}")
    return MNIST_DIR
