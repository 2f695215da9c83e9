"""`tf.python_io`: TFRecord writing and reading in plain Python. Re-exports only."""
from tensorweave.framework.tfrecord import (TFRecordWriter, TFRecordOptions,  # noqa: F401
                                       TFRecordCompressionType, tf_record_iterator)
