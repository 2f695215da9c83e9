"""Every test starts with a fresh default graph, and leaves no cached summary writer (a
MonitoredTrainingSession with a checkpoint_dir opens one, with its thread) behind, nor the
process-wide client token and TLS files a server with a token adopts for its own calls (a
later test's plain connections would otherwise present that token first)."""
import pytest

import tensorweave as tf
from tensorweave.distributed import security


@pytest.fixture(autouse=True)
def fresh_default_graph():
    tf.reset_default_graph()
    token, (tls, _) = security._client_token, security.client_tls()
    yield
    tf.reset_default_graph()
    tf.summary.FileWriterCache.clear()
    security.set_client_token(token)
    security.set_client_tls(tls)
