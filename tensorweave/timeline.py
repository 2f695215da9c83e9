"""`tensorweave.timeline.Timeline` (TF's `tensorflow.python.client.timeline`). Re-exports only."""
from tensorweave.summary.timeline import Timeline  # noqa: F401
