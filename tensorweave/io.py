"""`tf.io`: TFRecord files and Example parsing. Re-exports only."""
from tensorweave.framework.tfrecord import (TFRecordWriter, TFRecordOptions,  # noqa: F401
                                       TFRecordCompressionType, tf_record_iterator)
from tensorweave.ops.parsing_ops import (FixedLenFeature, VarLenFeature,  # noqa: F401
                                         SparseTensor, parse_single_example, parse_example,
                                         decode_raw)
from tensorweave.ops.parsing_ops import decode_csv  # noqa: F401
from tensorweave.ops.reader_ops import (read_file, write_file, matching_files,  # noqa: F401
                                        decode_compressed)
from tensorweave.ops.data_flow_ops import (QueueBase, PaddingFIFOQueue,  # noqa: F401
                                           RandomShuffleQueue, PriorityQueue)
from tensorweave.train.input import match_filenames_once  # noqa: F401
from tensorweave import io_gfile as gfile  # noqa: F401
from tensorweave.ops.image_codec_ops import (decode_png, encode_png, decode_jpeg,  # noqa: F401
                                             decode_and_crop_jpeg, encode_jpeg,
                                             extract_jpeg_shape, decode_gif, decode_bmp,
                                             decode_image, decode_webp, is_jpeg)
from tensorweave.train.meta_graph import write_graph  # noqa: F401
from tensorweave.ops.misc_ops import (serialize_tensor, parse_tensor,  # noqa: F401
                                      encode_base64, decode_base64)
from tensorweave.ops.sparse_serialization_ops import (serialize_sparse,  # noqa: F401
                                                      serialize_many_sparse,
                                                      deserialize_many_sparse)
from tensorweave.ops.sequence_parsing_ops import (FixedLenSequenceFeature,  # noqa: F401
                                                  SparseFeature, parse_sequence_example,
                                                  parse_single_sequence_example)
from tensorweave.ops.sequence_parsing_ops import (  # noqa: F401
    parse_example)
from tensorweave.ops.compat_ops_more import decode_json_example  # noqa: F401
from tensorweave.ops.proto_ops import decode_proto, encode_proto  # noqa: F401
from tensorweave.ragged.ragged_parsing import (RaggedFeature,  # noqa: F401,F811 - these
                                               parse_example,  # parse RaggedFeature too
                                               parse_single_example)
