"""tensorweave: TF 1.x graph-mode API (`import tensorweave as tf`). This module only re-exports;
tests/test_public_api.py pins the names users rely on."""
from tensorweave.framework.dtypes import (DType, as_dtype, float16, float32, float64, half,  # noqa: F401
                                          double, int8, int16, int32, int64, uint8, uint16, bool,
                                          string, uint32, uint64, complex64, complex128, variant)
from tensorweave.framework.tensor_shape import TensorShape, Dimension, dimension_value  # noqa: F401
from tensorweave.framework.graph import (Graph, Operation, Tensor, GraphKeys,  # noqa: F401
                                         get_default_graph, reset_default_graph,
                                         get_default_session, name_scope, control_dependencies,
                                         device, container, colocate_with, add_to_collection,
                                         add_to_collections, get_collection, get_collection_ref)
from tensorweave.framework.device import DeviceSpec  # noqa: F401
from tensorweave.framework.constant_op import (constant, convert_to_tensor,  # noqa: F401
                                               convert_n_to_tensor,
                                               register_tensor_conversion_function)
from tensorweave.framework.indexed_slices import IndexedSlices  # noqa: F401
from tensorweave.framework.graph_io import import_graph_def  # noqa: F401
from tensorweave.framework.random_seed import set_random_seed  # noqa: F401
from tensorweave.framework.protos.graph_pb2 import (GraphDef, NodeDef, AttrValue,  # noqa: F401
                                                    TensorProto, TensorShapeProto)
from tensorweave.framework.tensor_util import make_tensor_proto, make_ndarray  # noqa: F401
from tensorweave.ops.array_ops import (placeholder, placeholder_with_default, identity,  # noqa: F401
                                       stop_gradient, shape, size, rank, reshape, fill, zeros,
                                       ones, zeros_like, ones_like, stack, unstack, concat,
                                       split, expand_dims, squeeze, transpose, gather,
                                       boolean_mask, pad)
from tensorweave.ops.array_ops import slice_ as slice  # noqa: F401, A001
from tensorweave.ops.math_ops import (add, subtract, multiply, divide, truediv, div,  # noqa: F401
                                      floordiv, floor_div, mod, floormod, pow, negative,
                                      abs, sign, square, sqrt, rsqrt, exp, expm1, log, log1p,
                                      tanh, sigmoid, reciprocal, sin, cos, floor, ceil, round,
                                      maximum, minimum, squared_difference, add_n, matmul,
                                      tensordot, reduce_sum, reduce_mean, reduce_max, reduce_min,
                                      reduce_prod, reduce_all, reduce_any, argmax, argmin,
                                      equal, not_equal, less, less_equal, greater,
                                      greater_equal, logical_and, logical_or, logical_not,
                                      logical_xor, where, where_v2, cast, to_float, to_int32,
                                      to_int64, to_double, unsorted_segment_sum, invert_permutation,
                                      broadcast_to)
from tensorweave.ops.math_ops import range_ as range  # noqa: F401, A001
from tensorweave.ops.math_ops import sub, mul, neg  # noqa: F401
from tensorweave.ops.strided_slice_ops import strided_slice  # noqa: F401
from tensorweave.ops.indexing_ops import gather_nd, scatter_nd, one_hot, sequence_mask  # noqa: F401
from tensorweave.ops.pad_tile_ops import tile, reverse  # noqa: F401
from tensorweave.ops.pad_tile_ops import reverse as reverse_v2  # noqa: F401
from tensorweave.ops.sort_ops import unique  # noqa: F401
from tensorweave.ops.math_ops import is_nan, is_inf, is_finite  # noqa: F401
from tensorweave.ops.cumulative_ops import cumsum, cumprod, lin_space, linspace, meshgrid  # noqa: F401
from tensorweave.ops.linalg_ops import einsum  # noqa: F401
from tensorweave.ops.matrix_ops import (cross, diag, diag_part, eye, matrix_diag,  # noqa: F401
                                        matrix_diag_part, matrix_set_diag, matrix_transpose,
                                        trace)
from tensorweave.ops.matrix_ops import band_part as matrix_band_part  # noqa: F401
from tensorweave.ops.linalg_decomp_ops import (cholesky, cholesky_solve, qr, svd,  # noqa: F401
                                               matrix_solve_ls, self_adjoint_eig,
                                               self_adjoint_eigvals)
from tensorweave.ops.linalg_decomp_ops import det as matrix_determinant  # noqa: F401
from tensorweave.ops.linalg_decomp_ops import inv as matrix_inverse  # noqa: F401
from tensorweave.ops.linalg_decomp_ops import solve as matrix_solve  # noqa: F401
from tensorweave.ops.linalg_decomp_ops import (  # noqa: F401
    triangular_solve as matrix_triangular_solve)
from tensorweave.ops.reduction_ops import reduce_logsumexp, count_nonzero  # noqa: F401
from tensorweave.ops.clip_ops import (clip_by_value, clip_by_norm, clip_by_global_norm,  # noqa: F401
                                      clip_by_average_norm, global_norm, norm)
from tensorweave.ops.debug_ops import (check_numerics, verify_tensor_all_finite,  # noqa: F401
                                       Assert, Print)
from tensorweave.ops.debug_ops import print_v2 as print  # noqa: F401, A001
from tensorweave.ops.check_ops import (assert_equal, assert_none_equal, assert_less,  # noqa: F401
                                       assert_less_equal, assert_greater,
                                       assert_greater_equal, assert_positive, assert_negative,
                                       assert_non_negative, assert_non_positive, assert_rank,
                                       assert_rank_at_least, assert_type, assert_integer,
                                       assert_scalar, assert_near)
from tensorweave.ops.random_ops import (random_normal, random_uniform,  # noqa: F401
                                        truncated_normal, random_shuffle)
from tensorweave.ops.random_sampling_ops import multinomial, random_poisson  # noqa: F401
from tensorweave.ops.control_flow_ops import group, no_op, tuple, with_dependencies  # noqa: F401, A001
from tensorweave.ops.control_flow_ops import case, cond, while_loop  # noqa: F401
from tensorweave.ops.data_flow_ops import (QueueBase, FIFOQueue, PaddingFIFOQueue,  # noqa: F401
                                           RandomShuffleQueue, ConditionalAccumulator,
                                           ConditionalAccumulatorBase,
                                           SparseConditionalAccumulator)
from tensorweave.ops.state_ops import (assign, assign_add, assign_sub, scatter_update,  # noqa: F401
                                       scatter_add, scatter_sub, is_variable_initialized)
from tensorweave.ops.variables import (Variable, global_variables, all_variables,  # noqa: F401
                                       local_variables, trainable_variables, model_variables,
                                       moving_average_variables, variables_initializer,
                                       initialize_variables, global_variables_initializer,
                                       initialize_all_variables, local_variables_initializer,
                                       initialize_local_variables, report_uninitialized_variables,
                                       assert_variables_initialized)
from tensorweave.ops.variable_scope import (variable_scope, get_variable,  # noqa: F401
                                            get_local_variable, get_variable_scope,
                                            VariableScope, AUTO_REUSE, variable_op_scope)
from tensorweave.ops.partitioned_variables import (fixed_size_partitioner,  # noqa: F401
                                                  min_max_variable_partitioner,
                                                  variable_axis_size_partitioner)
from tensorweave.ops.init_ops import (zeros_initializer, ones_initializer,  # noqa: F401
                                      constant_initializer, random_uniform_initializer,
                                      random_normal_initializer, truncated_normal_initializer,
                                      variance_scaling_initializer, glorot_uniform_initializer,
                                      glorot_normal_initializer)
from tensorweave.ops.matrix_initializers import (orthogonal_initializer,  # noqa: F401
                                                 uniform_unit_scaling_initializer)
from tensorweave.ops.gradients import (gradients, hessians, RegisterGradient,  # noqa: F401
                                       NotDifferentiable, no_gradient)
from tensorweave.runtime.session import Session, InteractiveSession  # noqa: F401
from tensorweave.runtime.config import (ConfigProto, RunOptions, RunMetadata,  # noqa: F401
                                        GPUOptions, GraphOptions, OptimizerOptions)
from tensorweave.distributed.config import RPCOptions  # noqa: F401
from tensorweave import kernels as _kernels  # noqa: F401 - registers every kernel
from tensorweave import layers, losses, metrics  # noqa: F401
from tensorweave import linalg  # noqa: F401
from tensorweave import debugging  # noqa: F401
from tensorweave import (app, compat, errors, flags, initializers, logging, math,  # noqa: F401
                         nn, random, train, dtypes)
from tensorweave.ops.parsing_ops import (FixedLenFeature, VarLenFeature,  # noqa: F401
                                         parse_single_example, parse_example, decode_raw)
from tensorweave.ops.reader_ops import (ReaderBase, TFRecordReader, TextLineReader,  # noqa: F401
                                        FixedLengthRecordReader, WholeFileReader,
                                        IdentityReader, read_file, matching_files)
from tensorweave.ops.parsing_ops import decode_csv  # noqa: F401
from tensorweave import gfile  # noqa: F401
from tensorweave import queue  # noqa: F401
from tensorweave.ops.reader_ops import write_file, decode_compressed  # noqa: F401
from tensorweave.ops.data_flow_ops import PriorityQueue  # noqa: F401
from tensorweave.ops.reduction_ops import arg_max, arg_min  # noqa: F401
from tensorweave.ops.math_ops import realdiv, scalar_mul  # noqa: F401
from tensorweave.ops.math_ops import divide_no_nan as div_no_nan  # noqa: F401
from tensorweave.ops.activation_ops import log_sigmoid  # noqa: F401
from tensorweave.ops.array_ops import shape_n  # noqa: F401
from tensorweave.ops.gradients import not_differentiable as NoGradient  # noqa: F401
from tensorweave.framework.constant_op import (is_tensor, is_numeric_tensor,  # noqa: F401
                                               get_static_value,
                                               convert_to_tensor_or_indexed_slices)
from tensorweave.framework.random_seed import get_seed  # noqa: F401
from tensorweave.framework.errors import OpError  # noqa: F401
from tensorweave.ops.state_ops import count_up_to  # noqa: F401
from tensorweave import data, io, python_io  # noqa: F401
# SparseTensor and the tf.sparse_* spellings of tf.sparse.
from tensorweave.framework.sparse_tensor import (SparseTensor, SparseTensorValue,  # noqa: F401
                                                 convert_to_tensor_or_sparse_tensor)
from tensorweave.ops.sparse_ops import (sparse_add, sparse_maximum, sparse_minimum,  # noqa: F401
                                        sparse_reduce_sum, sparse_reduce_max,
                                        sparse_reduce_sum_sparse, sparse_reduce_max_sparse,
                                        sparse_reorder, sparse_reshape, sparse_softmax,
                                        sparse_tensor_dense_matmul, sparse_tensor_to_dense,
                                        sparse_to_dense)
from tensorweave.ops.sparse_slicing_ops import (sparse_concat, sparse_fill_empty_rows,  # noqa: F401
                                                sparse_slice, sparse_split)
from tensorweave.ops.sparse_compose_ops import (sparse_placeholder, sparse_retain,  # noqa: F401
                                                sparse_transpose, sparse_to_indicator,
                                                sparse_merge, sparse_reset_shape,
                                                sparse_segment_sum, sparse_segment_mean,
                                                sparse_segment_sqrt_n, sparse_matmul)
from tensorweave import sparse  # noqa: F401
from tensorweave.ops.dynamic_stitch_ops import dynamic_partition, dynamic_stitch  # noqa: F401
from tensorweave.ops.string_ops import (as_string, reduce_join, regex_replace, string_join,  # noqa: F401
                                        string_split, string_strip, string_to_number, substr)
from tensorweave.ops.string_ops import (string_to_hash_bucket,  # noqa: F401
                                        string_to_hash_bucket_fast, string_to_hash_bucket_strong)
from tensorweave import strings  # noqa: F401
from tensorweave.ops.script_ops import py_func, numpy_function  # noqa: F401
from tensorweave.ops.special_math_ops import (acos, acosh, asin, asinh, atan, atan2,  # noqa: F401
                                              atanh, cosh, sinh, tan, erf, erfc, lgamma,
                                              digamma, polygamma, zeta, rint)
from tensorweave.ops.segment_ops import (segment_sum, segment_mean, segment_max,  # noqa: F401
                                         segment_min, segment_prod, unsorted_segment_max,
                                         unsorted_segment_min, unsorted_segment_prod,
                                         unsorted_segment_mean, unsorted_segment_sqrt_n,
                                         bincount, confusion_matrix)
from tensorweave.ops.math_compose_ops import (accumulate_n, lbeta, is_non_decreasing,  # noqa: F401
                                              is_strictly_increasing, real, imag, conj, angle)
from tensorweave.ops.space_ops import (depth_to_space, space_to_depth, space_to_batch,  # noqa: F401
                                       space_to_batch_nd, batch_to_space, batch_to_space_nd)
from tensorweave.ops.space_ops import required_space_to_batch_paddings  # noqa: F401
from tensorweave.ops.special_functions_ops import igamma, igammac, betainc  # noqa: F401
from tensorweave.ops.set_ops import edit_distance  # noqa: F401
from tensorweave import sets  # noqa: F401
from tensorweave.ops.array_extra_ops import (truncatediv, truncatemod, searchsorted,  # noqa: F401
                                             unique_with_counts, setdiff1d,
                                             histogram_fixed_width, histogram_fixed_width_bins,
                                             roll, sort, argsort, repeat)
from tensorweave import bitwise, manip  # noqa: F401
from tensorweave.ops.sparse_serialization_ops import (serialize_sparse,  # noqa: F401
                                                      serialize_many_sparse,
                                                      deserialize_many_sparse)
from tensorweave.ops.sparse_compose_ops import sparse_mask  # noqa: F401
from tensorweave import summary  # noqa: F401
from tensorweave import contrib  # noqa: F401 - its submodules load on first use
from tensorweave import saved_model  # noqa: F401
from tensorweave import image  # noqa: F401
from tensorweave import keras  # noqa: F401
from tensorweave.platform import extensions as _extensions  # noqa: E402
_extensions.provide("contrib.keras", keras=keras)  # tf.contrib.keras answers with tf.keras
from tensorweave import keras_estimator as _keras_estimator  # noqa: E402
keras.estimator = _keras_estimator  # tf.keras.estimator.model_to_estimator
from tensorweave import feature_column  # noqa: F401
from tensorweave import estimator  # noqa: F401
from tensorweave.framework.protos.summary_pb2 import (Summary, SummaryMetadata,  # noqa: F401
                                                      Event, SessionLog, HistogramProto,
                                                      LogMessage, TaggedRunMetadata)

from tensorweave.platform.tf_logging import get_logger  # noqa: F401,E402

from tensorweave import nest  # noqa: F401,E402
from tensorweave import graph_util  # noqa: F401,E402
from tensorweave import bitwise  # noqa: F401,E402
from tensorweave.ops.misc_ops import (identity_n, ensure_shape, broadcast_dynamic_shape,  # noqa: F401,E402
                                      broadcast_static_shape, unravel_index, bitcast,
                                      timestamp, serialize_tensor, parse_tensor, encode_base64,
                                      decode_base64, saturate_cast)
from tensorweave.ops.compat_ops import (AggregationMethod, UnconnectedGradients,  # noqa: F401,E402
                                        VariableAggregation, VariableSynchronization,
                                        executing_eagerly_outside_functions,
                                        control_flow_v2_enabled, is_symbolic_tensor,
                                        init_scope, op_scope, no_regularizer, switch_case,
                                        tables_initializer, initialize_all_tables,
                                        vectorized_map, parallel_stack, custom_gradient,
                                        grad_pass_through, recompute_grad,
                                        create_partitioned_variables)
from tensorweave.ops.template import make_template  # noqa: F401,E402
from tensorweave import quantization  # noqa: F401,E402
from tensorweave import audio, mixed_precision, resource_loader  # noqa: F401,E402
from tensorweave import config  # noqa: F401,E402
from tensorweave import distributions  # noqa: F401,E402
from tensorweave import lookup  # noqa: F401,E402
from tensorweave import profiler  # noqa: F401,E402
from tensorweave.ops.random_gamma_ops import random_gamma  # noqa: F401,E402
from tensorweave.ops.compat_ops_more import (py_function, conv2d_backprop_filter_v2,  # noqa: F401,E402
                                             conv2d_backprop_input_v2, approx_top_k,
                                             decode_json_example, fingerprint)
from tensorweave.ops.sequence_parsing_ops import (FixedLenSequenceFeature,  # noqa: F401,E402
                                                  SparseFeature, parse_single_sequence_example)
from tensorweave.ops.sequence_parsing_ops import (  # noqa: F401,E402 - takes SparseFeature too
    parse_example)
from tensorweave.ops.compat_more import (Module, guarantee_const,  # noqa: F401,E402
                                         add_check_numerics_ops, resource_variables_enabled)
from tensorweave.compat import dimension_at_index  # noqa: F401,E402
from tensorweave.quantization import *  # noqa: F401,F403,E402 - tf.fake_quant_* as in TF 1.x
from tensorweave.ops.scatter_ops import (scatter_mul, scatter_div, scatter_min,  # noqa: F401,E402
                                         scatter_max, scatter_nd_update, scatter_nd_add,
                                         scatter_nd_sub, tensor_scatter_nd_update,
                                         tensor_scatter_nd_add, tensor_scatter_nd_sub,
                                         tensor_scatter_nd_max, tensor_scatter_nd_min,
                                         batch_gather, batch_scatter_update)
from tensorweave.ops.scatter_ops import tensor_scatter_nd_update as tensor_scatter_update  # noqa: F401,E402
from tensorweave.ops.scatter_ops import tensor_scatter_nd_add as tensor_scatter_add  # noqa: F401,E402
from tensorweave.ops.scatter_ops import tensor_scatter_nd_sub as tensor_scatter_sub  # noqa: F401,E402
from tensorweave.ops.image_ops import random_crop  # noqa: F401,E402
from tensorweave.ops.image_crop_ops import extract_image_patches  # noqa: F401,E402
from tensorweave.framework.protos.meta_graph_pb2 import MetaGraphDef, TensorInfo  # noqa: F401,E402
from tensorweave.data.structure import TensorSpec  # noqa: F401,E402
from tensorweave.ops.check_ops_more import (assert_rank_in, assert_same_float_dtype,  # noqa: F401,E402
                                            assert_proper_iterable, is_non_decreasing,
                                            is_strictly_increasing)
from tensorweave import version  # noqa: F401,E402
from tensorweave.ops.complex_ops import complex  # noqa: F401,E402,A004
from tensorweave.ops.spectral_ops import (fft, ifft, fft2d, ifft2d, fft3d, ifft3d,  # noqa: F401,E402
                                          fftnd, ifftnd, rfftnd, irfftnd)
from tensorweave.ops.math_ops import to_complex64, to_complex128  # noqa: F401,E402
from tensorweave import signal, spectral  # noqa: F401,E402
from tensorweave import distribute  # noqa: F401,E402
from tensorweave.ops import image_transform_ops as _image_transform_ops  # noqa: F401,E402 - ops
from tensorweave.version import (VERSION, GIT_VERSION, COMPILER_VERSION,  # noqa: F401,E402
                                 GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_CONSUMER,
                                 GRAPH_DEF_VERSION_MIN_PRODUCER)

__version__ = VERSION  # the TF API version programs test; tensorweave's: version.py
newaxis = None


def disable_v2_behavior():
    """Graph mode is the only mode: nothing to disable."""


def disable_eager_execution():
    """Graph mode is the only mode: nothing to disable."""


def disable_v2_tensorshape():
    """TensorShape always behaves as in TF 1.x (indexing gives Dimension objects)."""


def disable_tensor_equality():
    """Tensors always compare by identity and are hashable, as in TF 1.x."""


def disable_resource_variables():
    """tensorweave has one kind of variable (TF 1.x's reference-style semantics): nothing to
    switch."""


def disable_control_flow_v2():
    """tf.cond and tf.while_loop have one implementation here: nothing to switch."""


def executing_eagerly():
    return False


from tensorweave import test  # noqa: E402,F401 - tf.test, last: it uses the whole package

# Recurrent nets: TensorArray (issue 14).
from tensorweave.ops.tensor_array import TensorArray  # noqa: E402,F401
from tensorweave.ops.sequence_ops import reverse_sequence  # noqa: E402,F401
from tensorweave.ops.map_fn_ops import map_fn, scan, foldl, foldr  # noqa: E402,F401

# Quantized and narrow dtypes, tf.function and friends, session handles (issue 14).
from tensorweave.framework.dtypes import (bfloat16, qint8, quint8, qint16, quint16,  # noqa: E402,F401
                                          qint32, QUANTIZED_DTYPES)
from tensorweave.ops.quantize_ops import (quantize, quantize_v2, dequantize,  # noqa: E402,F401
                                          quantized_concat, to_bfloat16)
from tensorweave.framework.function_trace import function, wrap_function  # noqa: E402,F401
from tensorweave.ops.critical_section_ops import CriticalSection  # noqa: E402,F401
from tensorweave.ops.variable_creator import variable_creator_scope  # noqa: E402,F401
from tensorweave.ops.session_ops import (get_session_handle, get_session_tensor,  # noqa: E402,F401
                                         delete_session_tensor)
from tensorweave.ops.nn_extra_ops import extract_volume_patches  # noqa: E402,F401
from tensorweave.ops.index_shuffle_ops import random_index_shuffle  # noqa: E402,F401
from tensorweave.ops.linalg_more_ops import sqrtm as matrix_square_root  # noqa: E402,F401
from tensorweave import sysconfig  # noqa: E402,F401
from tensorweave import raw_ops  # noqa: E402,F401
from tensorweave.sysconfig import CXX11_ABI_FLAG, CXX_VERSION, MONOLITHIC_BUILD  # noqa: E402,F401
from tensorweave.load_library import (load_op_library, load_library,  # noqa: E402,F401
                                      load_file_system_library)
from tensorweave import experimental  # noqa: E402,F401
from tensorweave import autograph  # noqa: E402,F401
from tensorweave.framework.dtypes import resource  # noqa: E402,F401
from tensorweave.v2_switches import (enable_control_flow_v2, enable_eager_execution,  # noqa: E402,F401
                                     enable_v2_behavior, enable_tensor_equality,
                                     enable_v2_tensorshape, enable_resource_variables)

# Ragged tensors (issue 14): tf.ragged, tf.RaggedTensor and the raw fill-empty-rows ops.
from tensorweave import ragged  # noqa: E402,F401
from tensorweave.ragged import RaggedTensor, RaggedTensorSpec  # noqa: E402,F401
from tensorweave.ragged import (ragged_fill_empty_rows,  # noqa: E402,F401
                                ragged_fill_empty_rows_grad)
# tf.string_split with result_type='RaggedTensor' too (it replaces the SparseTensor-only one).
from tensorweave.ragged.ragged_string_ops import string_split  # noqa: E402,F401,F811
from tensorweave.data.composite_specs import SparseTensorSpec  # noqa: E402,F401
from tensorweave.ragged.ragged_parsing import (parse_example,  # noqa: E402,F401,F811 - they
                                               parse_single_example)  # take RaggedFeature too

# The last TF 1.x names (issue: API gaps): the tape, the remaining TypeSpecs.
from tensorweave.ops.gradient_tape import GradientTape  # noqa: E402,F401
from tensorweave.data.structure import TypeSpec  # noqa: E402,F401
from tensorweave.data.optional import OptionalSpec  # noqa: E402,F401
from tensorweave.data.composite_specs import TensorArraySpec  # noqa: E402,F401
from tensorweave.data.value_specs import (IndexedSlicesSpec, NoneTensorSpec,  # noqa: E402,F401
                                          type_spec_from_value)
from tensorweave.ops.pinned_memory_ops import check_pinned  # noqa: E402,F401
from tensorweave.ops.conv_general import conv  # noqa: E402,F401
from tensorweave.ops.lmdb_reader_ops import LMDBReader  # noqa: E402,F401
from tensorweave.ops.batch_ops import nondifferentiable_batch_function  # noqa: E402,F401
from tensorweave.framework.protos.name_attr_list_pb2 import NameAttrList  # noqa: E402,F401
from tensorweave import tpu, types, user_ops, xla  # noqa: E402,F401

# TF 1.x's own module paths (`tensorflow.python.framework.ops`, `tensorflow.core...._pb2`),
# which programs import directly, answered from these namespaces (compat/source_paths.py).
_TENSORWEAVE_ROOT = True
from tensorweave.compat import source_paths as _source_paths  # noqa: E402
_source_paths.install()
