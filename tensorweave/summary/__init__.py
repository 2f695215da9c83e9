"""`tf.summary` (L4 observability): summary ops, TensorBoard event files (writer.py,
writer_cache.py) and step timelines (timeline.py). Re-exports only."""
from tensorweave.ops.summary_ops import (scalar, histogram, image, audio, text,  # noqa: F401
                                         tensor_summary, merge, merge_all)
from tensorweave.framework.event_file import summary_iterator  # noqa: F401
from tensorweave.framework.protos.summary_pb2 import (Summary, SummaryDescription,  # noqa: F401
                                                      SummaryMetadata, Event, SessionLog,
                                                      TaggedRunMetadata)
from tensorweave.summary.writer import FileWriter  # noqa: F401
from tensorweave.summary.writer_cache import FileWriterCache  # noqa: F401
from tensorweave.summary import timeline as _timeline  # noqa: F401 - registers chrome_trace
from tensorweave.ops.compat_more import all_v2_summary_ops, initialize  # noqa: F401
from tensorweave.summary.summary_description import get_summary_description  # noqa: F401,E402
