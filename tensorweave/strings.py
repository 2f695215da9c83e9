"""`tf.strings`: re-exports."""
from tensorweave.ops.string_ops import (as_string, lower, reduce_join, regex_full_match,  # noqa: F401
                                        regex_replace, substr, unicode_transcode,
                                        unsorted_segment_join, upper)
from tensorweave.ops.string_ops import string_join as join  # noqa: F401
from tensorweave.ops.string_ops import string_length as length  # noqa: F401
from tensorweave.ops.string_ops import string_strip as strip  # noqa: F401
from tensorweave.ops.string_ops import string_to_number as to_number  # noqa: F401
from tensorweave.ops.debug_ops import string_format as format  # noqa: F401, A001
from tensorweave.ops.string_ops import string_to_hash_bucket as to_hash_bucket  # noqa: F401
from tensorweave.ops.string_ops import (  # noqa: F401
    string_to_hash_bucket_fast as to_hash_bucket_fast,
    string_to_hash_bucket_strong as to_hash_bucket_strong)
from tensorweave.ragged.ragged_string_ops import (  # noqa: F401
    bytes_split, ngrams, split, unicode_decode, unicode_decode_with_offsets, unicode_encode,
    unicode_script, unicode_split, unicode_split_with_offsets)
