"""`tf.python_io`: TFRecord writing and reading in plain Python. Re-exports only."""
from tensorweave.data.tfrecord import (TFRecordWriter, TFRecordOptions,  # noqa: F401
                                       TFRecordCompressionType, tf_record_iterator)
