"""`tf.io`: TFRecord files and Example parsing. Re-exports only."""
from tensorweave.framework.tfrecord import (TFRecordWriter, TFRecordOptions,  # noqa: F401
                                       TFRecordCompressionType, tf_record_iterator)
from tensorweave.ops.parsing_ops import (FixedLenFeature, VarLenFeature,  # noqa: F401
                                         SparseTensor, parse_single_example, parse_example,
                                         decode_raw)
