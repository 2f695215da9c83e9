"""Every framework test builds into a fresh graph, so names and collections never leak."""
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as fresh:
        yield fresh
