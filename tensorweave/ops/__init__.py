"""L1 graph-building API: one module per op family, each registering its ops' signatures, shape
functions and gradient rules. Importing this package registers every family (the architecture
test checks each registered op has a kernel, a gradient decision and a test row)."""
from tensorweave.ops import (array_ops, control_flow_ops, math_ops, nn_ops,  # noqa: F401
                             random_ops, state_ops, training_ops, variables, variable_scope,
                             init_ops)
from tensorweave.ops import activation_ops, conv_ops, nn_impl  # noqa: F401
from tensorweave.ops import dataset_ops, parsing_ops  # noqa: F401
from tensorweave.ops import indexing_ops, pad_tile_ops, sort_ops, strided_slice_ops  # noqa: F401
from tensorweave.ops import clip_ops, cumulative_ops  # noqa: F401
from tensorweave.ops import check_ops, debug_ops  # noqa: F401
from tensorweave.ops import comm_ops  # noqa: F401
from tensorweave.ops import data_flow_ops  # noqa: F401
from tensorweave.ops import io_ops, partitioned_variables  # noqa: F401
from tensorweave.ops import reader_ops  # noqa: F401
from tensorweave.ops import summary_ops  # noqa: F401
from tensorweave.ops import conv3d_ops, conv_variants  # noqa: F401
from tensorweave.ops import image_resize_ops, image_ops  # noqa: F401
from tensorweave.ops import image_color_ops  # noqa: F401
from tensorweave.ops import image_boxes_ops  # noqa: F401
from tensorweave.ops import image_crop_ops  # noqa: F401
from tensorweave.ops import image_codec_ops  # noqa: F401
from tensorweave.ops import image_metrics_ops  # noqa: F401
from tensorweave.ops import matrix_ops, linalg_decomp_ops  # noqa: F401
from tensorweave.ops import random_sampling_ops  # noqa: F401
from tensorweave.ops import collective_ops  # noqa: F401
from tensorweave.ops import tensor_array_ops  # noqa: F401
from tensorweave.ops import stateless_random_ops  # noqa: F401
from tensorweave.ops import sequence_ops  # noqa: F401
from tensorweave.ops import rnn_ops  # noqa: F401
from tensorweave.ops import misc_ops, compat_ops, template  # noqa: F401
from tensorweave.ops import scatter_ops  # noqa: F401
from tensorweave.ops import fake_quant_ops  # noqa: F401
from tensorweave.ops import audio_ops, compat_more  # noqa: F401
from tensorweave.ops import sequence_parsing_ops  # noqa: F401
from tensorweave.ops import lookup_ops  # noqa: F401
from tensorweave.ops import compat_ops_more  # noqa: F401
from tensorweave.ops import random_gamma_ops  # noqa: F401
from tensorweave.ops import linalg_more_ops  # noqa: F401
from tensorweave.ops import linalg_special_ops  # noqa: F401
from tensorweave.ops import unicode_ops  # noqa: F401
from tensorweave.ops import sparse_cross_ops  # noqa: F401
from tensorweave.ops import quantize_ops, quantized_nn_ops  # noqa: F401
from tensorweave.ops import function_call_ops  # noqa: F401
from tensorweave.ops import critical_section_ops, variable_creator  # noqa: F401
from tensorweave.ops import session_ops  # noqa: F401
from tensorweave.ops import fractional_pool_ops  # noqa: F401
from tensorweave.ops import index_shuffle_ops, nn_extra_ops  # noqa: F401
from tensorweave.ops import pinned_memory_ops, tpu_ops, user_ops  # noqa: F401
from tensorweave.ops import batch_ops, iterator_state_ops, lmdb_reader_ops, sdca_ops  # noqa: F401
