"""tf.ragged (L2): RaggedTensor, a tensor whose rows have different lengths, built in graph
mode from existing ops (values + row_splits per ragged dimension). Session.run fetches and
feeds it through framework/composite_tensor.py; elementwise math ops dispatch to it there.

Limits, by design: row_splits are always int64 (int32 partitions are cast on the way in);
RaggedTensor.to_list evaluates in a session (graph mode has no eager values); rt[...] takes
integers and slices (no Ellipsis or tf.newaxis); elementwise ops need ragged operands with the
same row partition and dense operands that broadcast against one flat value.
"""
from tensorweave.ragged.ragged_tensor import RaggedTensor, is_ragged  # noqa: F401
from tensorweave.ragged.ragged_value import RaggedTensorSpec, RaggedTensorValue  # noqa: F401
from tensorweave.ragged.segment_ids import (row_splits_to_segment_ids,  # noqa: F401
                                            segment_ids_to_row_splits)
from tensorweave.ragged.ragged_factory import (constant, constant_value,  # noqa: F401
                                               placeholder)
from tensorweave.ragged.ragged_factory import ragged_range as range  # noqa: F401, A004
from tensorweave.ragged.ragged_math import map_flat_values  # noqa: F401
from tensorweave.ragged.ragged_array_ops import (boolean_mask, stack,  # noqa: F401
                                                 stack_dynamic_partitions,
                                                 ragged_fill_empty_rows,
                                                 ragged_fill_empty_rows_grad)
from tensorweave.ragged import ragged_conversion, ragged_getitem  # noqa: F401
from tensorweave.ragged.ragged_sparse_ops import cross, cross_hashed  # noqa: F401
