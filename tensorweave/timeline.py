"""`tensorweave.timeline.Timeline` (TF's `tensorflow.python.client.timeline`), and the merged
timeline of a distributed step (summary/merged_timeline.py). Re-exports only."""
from tensorweave.summary.timeline import Timeline  # noqa: F401
from tensorweave.summary.merged_timeline import (MergedTimeline, load_step_stats,  # noqa: F401
                                                 save_step_stats)
