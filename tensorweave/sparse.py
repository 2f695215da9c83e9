"""`tf.sparse`: re-exports."""
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: F401
from tensorweave.ops.data_flow_ops import SparseConditionalAccumulator  # noqa: F401
from tensorweave.ops.sparse_ops import (sparse_add as add, sparse_maximum as maximum,  # noqa: F401
                                        sparse_minimum as minimum,
                                        sparse_reduce_sum as reduce_sum,
                                        sparse_reduce_max as reduce_max,
                                        sparse_reduce_sum_sparse as reduce_sum_sparse,
                                        sparse_reduce_max_sparse as reduce_max_sparse,
                                        sparse_reorder as reorder, sparse_reshape as reshape,
                                        sparse_softmax as softmax,
                                        sparse_tensor_dense_matmul as sparse_dense_matmul,
                                        sparse_tensor_dense_matmul as matmul,
                                        sparse_tensor_to_dense as to_dense)
from tensorweave.ops.sparse_slicing_ops import (sparse_concat as concat,  # noqa: F401
                                                sparse_fill_empty_rows as fill_empty_rows,
                                                sparse_slice as slice, sparse_split as split)
from tensorweave.ops.sparse_compose_ops import (expand_dims, eye, from_dense,  # noqa: F401
                                                sparse_placeholder as placeholder,
                                                sparse_retain as retain,
                                                sparse_transpose as transpose,
                                                sparse_to_indicator as to_indicator,
                                                sparse_merge as merge,
                                                sparse_reset_shape as reset_shape,
                                                sparse_segment_sum as segment_sum,
                                                sparse_segment_mean as segment_mean,
                                                sparse_segment_sqrt_n as segment_sqrt_n)
from tensorweave.ops.sparse_compose_ops import sparse_mask as mask  # noqa: F401
from tensorweave.ops.sparse_cross_ops import (sparse_cross as cross,  # noqa: F401
                                              sparse_cross_hashed as cross_hashed)
from tensorweave.ragged.ragged_sparse_ops import bincount  # noqa: F401
