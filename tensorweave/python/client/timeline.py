"""`tensorflow.python.client.timeline`: the Chrome-trace Timeline of a traced step."""
from tensorweave.summary.timeline import Timeline  # noqa: F401
