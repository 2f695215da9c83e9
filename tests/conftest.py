"""Every test starts with a fresh default graph, and leaves no cached summary writer (a
MonitoredTrainingSession with a checkpoint_dir opens one, with its thread) behind."""
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
    tf.summary.FileWriterCache.clear()
