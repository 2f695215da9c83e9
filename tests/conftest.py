"""Every test starts with a fresh default graph."""
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
