"""Every framework test builds into a fresh graph, so names and collections never leak.

A test marked `no_default_graph` runs with the global default graph instead (to test
`tf.reset_default_graph`, which refuses to run inside `graph.as_default()`).
"""
import pytest

import tensorweave as tf


def pytest_configure(config):
    config.addinivalue_line("markers", "no_default_graph: do not enter a fresh default graph")


@pytest.fixture(autouse=True)
def graph(request):
    if request.node.get_closest_marker("no_default_graph"):
        yield None
        return
    with tf.Graph().as_default() as fresh:
        yield fresh
