"""The names TF 1.x scripts rely on, pinned (STYLE.md item 8)."""
import importlib

import pytest

import tensorweave as tf


def _assert_names(module, names):
    """Every name of `names` (space separated) is an attribute of tf.<module> (dotted; ""
    for the top level)."""
    namespace = tf
    for part in filter(None, module.split(".")):
        namespace = getattr(namespace, part)
    missing = [n for n in names.split() if not hasattr(namespace, n)]
    assert not missing, f"tf.{module or '<top>'} lacks {missing}"


TOP_LEVEL = """
Graph Operation Tensor TensorShape Dimension DType GraphKeys Session InteractiveSession ConfigProto
RunOptions RunMetadata GPUOptions GraphOptions Variable IndexedSlices DeviceSpec GraphDef NodeDef
VariableScope AUTO_REUSE RegisterGradient NotDifferentiable
float16 float32 float64 half double int8 int16 int32 int64 uint8 uint16 bool string as_dtype
get_default_graph reset_default_graph get_default_session name_scope control_dependencies device
colocate_with add_to_collection add_to_collections get_collection get_collection_ref
constant convert_to_tensor placeholder placeholder_with_default identity stop_gradient shape size
rank reshape cast fill zeros ones zeros_like ones_like stack unstack concat split expand_dims
squeeze transpose gather boolean_mask pad slice range
add subtract multiply divide truediv div floordiv mod pow negative abs sign square sqrt rsqrt exp
log log1p tanh sigmoid reciprocal maximum minimum squared_difference add_n matmul tensordot
reduce_sum reduce_mean reduce_max reduce_min reduce_prod reduce_all reduce_any argmax argmin equal
not_equal less less_equal greater greater_equal logical_and logical_or logical_not where
to_float to_int32 to_int64
random_normal random_uniform truncated_normal set_random_seed
group no_op tuple with_dependencies cond case while_loop
assign assign_add assign_sub is_variable_initialized
global_variables local_variables trainable_variables global_variables_initializer
initialize_all_variables variables_initializer local_variables_initializer
report_uninitialized_variables variable_scope get_variable get_variable_scope
zeros_initializer ones_initializer constant_initializer random_uniform_initializer
random_normal_initializer truncated_normal_initializer glorot_uniform_initializer
variance_scaling_initializer
gradients hessians import_graph_def make_tensor_proto make_ndarray
disable_v2_behavior disable_eager_execution
app flags logging nn train errors math initializers random compat dtypes
layers losses metrics
data io python_io FixedLenFeature VarLenFeature parse_single_example parse_example decode_raw
fixed_size_partitioner min_max_variable_partitioner variable_axis_size_partitioner
newaxis strided_slice gather_nd scatter_nd one_hot sequence_mask tile reverse reverse_v2 unique
linspace lin_space meshgrid cumsum cumprod einsum reduce_logsumexp count_nonzero is_nan is_inf
is_finite clip_by_value clip_by_norm clip_by_global_norm clip_by_average_norm global_norm norm
linalg
check_numerics verify_tensor_all_finite Assert Print print assert_equal assert_none_equal
assert_less assert_less_equal assert_greater assert_greater_equal assert_positive assert_negative
assert_non_negative assert_non_positive assert_rank assert_rank_at_least assert_type
assert_integer assert_scalar assert_near where_v2 debugging
summary Summary SummaryMetadata Event SessionLog HistogramProto LogMessage TaggedRunMetadata
image
""".split()

SUBMODULES = {
    "nn": "relu softmax log_softmax sigmoid tanh softmax_cross_entropy_with_logits "
          "softmax_cross_entropy_with_logits_v2 sparse_softmax_cross_entropy_with_logits l2_loss "
          "conv2d conv2d_transpose conv2d_backprop_input conv2d_backprop_filter depthwise_conv2d "
          "depthwise_conv2d_native max_pool max_pool2d avg_pool avg_pool2d bias_add relu6 elu "
          "selu softplus softsign leaky_relu dropout moments batch_normalization "
          "fused_batch_norm l2_normalize sigmoid_cross_entropy_with_logits "
          "weighted_cross_entropy_with_logits in_top_k embedding_lookup xw_plus_b top_k",
    "layers": "Layer Dense Conv2D MaxPooling2D AveragePooling2D Flatten Dropout "
              "BatchNormalization dense conv2d max_pooling2d average_pooling2d flatten dropout "
              "batch_normalization l1_regularizer l2_regularizer l1_l2_regularizer",
    "losses": "Reduction compute_weighted_loss softmax_cross_entropy "
              "sparse_softmax_cross_entropy sigmoid_cross_entropy mean_squared_error "
              "absolute_difference huber_loss log_loss hinge_loss add_loss get_losses "
              "get_regularization_losses get_regularization_loss get_total_loss",
    "metrics": "accuracy mean mean_squared_error mean_absolute_error",
    "train": "Optimizer GradientDescentOptimizer MomentumOptimizer AdamOptimizer AdagradOptimizer "
             "RMSPropOptimizer get_global_step get_or_create_global_step create_global_step "
             "global_step exponential_decay piecewise_constant "
             "Example Features Feature BytesList FloatList Int64List SequenceExample "
             "Saver latest_checkpoint get_checkpoint_state update_checkpoint_state "
             "checkpoint_exists list_variables load_variable NewCheckpointReader "
             "SessionRunHook SessionRunArgs SessionRunContext SessionRunValues StopAtStepHook "
             "CheckpointSaverHook CheckpointSaverListener StepCounterHook LoggingTensorHook "
             "NanTensorHook NanLossDuringTrainingError FinalOpsHook FeedFnHook "
             "GlobalStepWaiterHook SecondOrStepTimer SessionManager Scaffold "
             "ChiefSessionCreator WorkerSessionCreator MonitoredSession "
             "SingularMonitoredSession MonitoredTrainingSession SyncReplicasOptimizer "
             "StopServersHook SummarySaverHook summary_iterator",
    "summary": "scalar histogram image audio text tensor_summary merge merge_all FileWriter "
               "FileWriterCache summary_iterator Summary SummaryDescription SummaryMetadata "
               "Event SessionLog TaggedRunMetadata",
    "errors": "OpError CancelledError UnknownError InvalidArgumentError DeadlineExceededError "
              "NotFoundError AlreadyExistsError PermissionDeniedError ResourceExhaustedError "
              "FailedPreconditionError AbortedError OutOfRangeError UnimplementedError "
              "InternalError UnavailableError DataLossError",
    "app": "run flags",
    "data": "Dataset Iterator TFRecordDataset TensorSpec make_one_shot_iterator "
            "make_initializable_iterator AUTOTUNE experimental",
    "io": "TFRecordWriter TFRecordOptions tf_record_iterator FixedLenFeature VarLenFeature "
          "parse_single_example parse_example decode_raw",
    "python_io": "TFRecordWriter TFRecordOptions TFRecordCompressionType tf_record_iterator",
    "flags": "FLAGS DEFINE_string DEFINE_integer DEFINE_float DEFINE_boolean DEFINE_bool",
    "logging": "set_verbosity info warn warning error fatal debug DEBUG INFO WARN ERROR FATAL",
    "math": "add subtract multiply divide truediv floordiv floormod mod pow logical_xor cumsum "
            "cumprod reduce_logsumexp count_nonzero reduce_euclidean_norm is_nan is_inf "
            "is_finite top_k in_top_k l2_normalize softmax log_softmax softplus softsign "
            "log_sigmoid divide_no_nan reduce_variance reduce_std",
    "linalg": "einsum norm matmul tensordot",
    "image": "ResizeMethod resize resize_images resize_bilinear resize_nearest_neighbor "
             "resize_bicubic resize_area resize_image_with_crop_or_pad resize_with_crop_or_pad "
             "resize_image_with_pad crop_to_bounding_box pad_to_bounding_box central_crop "
             "random_crop crop_and_resize flip_left_right flip_up_down random_flip_left_right "
             "random_flip_up_down transpose transpose_image rot90 extract_image_patches "
             "extract_patches extract_glimpse convert_image_dtype rgb_to_grayscale "
             "grayscale_to_rgb rgb_to_hsv hsv_to_rgb rgb_to_yiq yiq_to_rgb rgb_to_yuv "
             "yuv_to_rgb adjust_brightness adjust_contrast adjust_hue adjust_saturation "
             "adjust_gamma adjust_jpeg_quality "
             "random_brightness random_contrast random_hue random_saturation random_jpeg_quality "
             "per_image_standardization total_variation image_gradients sobel_edges psnr ssim "
             "ssim_multiscale non_max_suppression non_max_suppression_with_scores "
             "non_max_suppression_padded non_max_suppression_overlaps "
             "combined_non_max_suppression draw_bounding_boxes sample_distorted_bounding_box "
             "generate_bounding_box_proposals "
             "decode_png encode_png decode_jpeg encode_jpeg decode_and_crop_jpeg decode_image "
             "decode_gif decode_bmp decode_webp is_jpeg extract_jpeg_shape",
    "debugging": "check_numerics Assert assert_equal assert_none_equal assert_less "
                 "assert_less_equal assert_greater assert_greater_equal assert_positive "
                 "assert_negative assert_non_negative assert_non_positive assert_rank "
                 "assert_rank_at_least assert_type assert_integer assert_scalar assert_shapes "
                 "assert_all_finite assert_near is_nan is_inf is_finite",
}


# Issue 14 part 7: SparseTensor, tf.sparse, tf.strings, py_func, tf.nn / tf.math breadth.
PART7 = {
    "": "SparseTensor SparseTensorValue sparse_placeholder sparse_tensor_to_dense sparse_to_dense "
        "sparse_add sparse_concat sparse_reshape sparse_reorder sparse_retain sparse_slice "
        "sparse_split sparse_transpose sparse_reduce_sum sparse_reduce_max "
        "sparse_tensor_dense_matmul sparse_fill_empty_rows sparse_maximum sparse_minimum "
        "sparse_softmax sparse_to_indicator sparse_merge sparse_segment_sum sparse_segment_mean "
        "sparse_segment_sqrt_n convert_to_tensor_or_sparse_tensor dynamic_partition "
        "dynamic_stitch string_join string_split string_strip string_to_number "
        "string_to_hash_bucket_fast string_to_hash_bucket_strong string_to_hash_bucket substr "
        "as_string reduce_join regex_replace py_func numpy_function segment_sum segment_mean "
        "segment_max segment_min segment_prod unsorted_segment_max unsorted_segment_min "
        "unsorted_segment_prod unsorted_segment_mean unsorted_segment_sqrt_n bincount "
        "confusion_matrix acos asin atan atan2 sinh cosh tan erf erfc lgamma digamma igamma "
        "igammac betainc space_to_batch_nd batch_to_space_nd depth_to_space space_to_depth "
        "edit_distance sets truncatediv truncatemod searchsorted unique_with_counts setdiff1d "
        "histogram_fixed_width roll sort argsort repeat bitwise manip serialize_sparse "
        "serialize_many_sparse deserialize_many_sparse sparse_mask",
    "sparse": "SparseTensor placeholder to_dense from_dense add concat reshape reorder retain "
              "slice split transpose reduce_sum reduce_max matmul sparse_dense_matmul "
              "fill_empty_rows maximum minimum softmax to_indicator expand_dims eye",
    "strings": "join split length substr strip regex_full_match regex_replace to_number "
               "to_hash_bucket_fast to_hash_bucket_strong to_hash_bucket format lower upper "
               "reduce_join as_string ngrams unicode_transcode unsorted_segment_join",
    "nn": "nce_loss sampled_softmax_loss log_uniform_candidate_sampler "
          "uniform_candidate_sampler learned_unigram_candidate_sampler "
          "fixed_unigram_candidate_sampler compute_accidental_hits embedding_lookup_sparse "
          "safe_embedding_lookup_sparse crelu swish relu_layer log_poisson_loss "
          "normalize_moments weighted_moments sufficient_statistics lrn "
          "local_response_normalization batch_norm_with_global_normalization dilation2d "
          "erosion2d depth_to_space space_to_depth space_to_batch with_space_to_batch "
          "max_pool_with_argmax ctc_loss ctc_loss_v2 ctc_greedy_decoder "
          "ctc_beam_search_decoder collapse_repeated ctc_unique_labels",
    "math": "segment_sum unsorted_segment_max bincount confusion_matrix erf lgamma digamma "
            "polygamma zeta igamma betainc xlogy bessel_i0e special",
}


def test_part7_names():
    for module, names in PART7.items():
        namespace = getattr(tf, module) if module else tf
        missing = [n for n in names.split() if not hasattr(namespace, n)]
        assert not missing, f"tf.{module or '<top>'} lacks {missing}"


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_name(name):
    assert hasattr(tf, name), f"tf.{name} is missing"


@pytest.mark.parametrize("module,names", sorted(SUBMODULES.items()))
def test_submodule_names(module, names):
    namespace = getattr(tf, module)
    missing = [n for n in names.split() if not hasattr(namespace, n)]
    assert not missing, f"tf.{module} lacks {missing}"


def test_compat_v1_is_the_namespace():
    v1 = importlib.import_module("tensorweave.compat.v1")
    assert v1 is tf
    assert tf.compat.v1 is tf


def test_tutorial_import_path_exists():
    module = importlib.import_module("tensorweave.examples.tutorials.mnist.input_data")
    assert callable(module.read_data_sets)


def test_error_codes_match_tensorflow():
    assert tf.errors.InvalidArgumentError.error_code == 3
    assert tf.errors.FailedPreconditionError.error_code == 9
    assert tf.errors.UnavailableError.error_code == 14
    assert issubclass(tf.errors.AbortedError, tf.errors.OpError)


def test_tensor_operators_are_installed():
    for name in tf.Tensor._OVERLOADABLE:
        assert getattr(tf.Tensor, name, None) is not None, name


QUEUES_AND_RUNTIME = {
    "": "FIFOQueue PaddingFIFOQueue RandomShuffleQueue QueueBase ConditionalAccumulator "
        "ConditionalAccumulatorBase",
    "train": "QueueRunner Coordinator start_queue_runners add_queue_runner",
}


@pytest.mark.parametrize("module,names", sorted(QUEUES_AND_RUNTIME.items()))
def test_queue_and_runtime_names(module, names):
    _assert_names(module, names)


def test_timeline_module_path_exists():
    module = importlib.import_module("tensorweave.timeline")
    assert callable(module.Timeline)


# Issue 5: the distributed runtime (tf.train.Server & co; tf.Session.reset for remote targets).
DISTRIBUTED = {
    "": "RPCOptions",
    "train": "ClusterSpec Server ServerDef ClusterDef JobDef replica_device_setter "
             "GreedyLoadBalancingStrategy byte_size_load_fn TFConfigClusterResolver",
    "Session": "reset",
}


@pytest.mark.parametrize("module,names", sorted(DISTRIBUTED.items()))
def test_distributed_names(module, names):
    _assert_names(module, names)


# Issue 14 (parts 2, 7): the 1-D / 3-D / transposed / separable convolutions and tf.contrib.
CONV_AND_CONTRIB = {
    "nn": "conv1d conv1d_transpose conv3d conv3d_transpose conv3d_backprop_filter "
          "conv3d_backprop_filter_v2 separable_conv2d max_pool1d avg_pool1d max_pool3d avg_pool3d "
          "atrous_conv2d atrous_conv2d_transpose convolution conv_transpose max_pool_v2 "
          "avg_pool_v2 depthwise_conv2d_backprop_input depthwise_conv2d_backprop_filter",
    "layers": "InputSpec Conv1D Conv3D Conv2DTranspose Conv3DTranspose SeparableConv1D "
              "SeparableConv2D MaxPooling1D AveragePooling1D MaxPooling3D AveragePooling3D "
              "conv1d conv3d conv2d_transpose conv3d_transpose separable_conv1d separable_conv2d "
              "max_pooling1d average_pooling1d max_pooling3d average_pooling3d",
    "layers.experimental": "keras_style_scope set_keras_style",
    "contrib.layers": "flatten fully_connected conv2d conv2d_transpose max_pool2d avg_pool2d "
                      "batch_norm dropout layer_norm xavier_initializer "
                      "xavier_initializer_conv2d variance_scaling_initializer l1_regularizer "
                      "l2_regularizer l1_l2_regularizer sum_regularizer apply_regularization "
                      "embed_sequence optimize_loss one_hot_encoding repeat stack arg_scope "
                      "summarize_tensor summarize_activations summarize_collection",
    "contrib.framework": "get_or_create_global_step get_global_step arg_scope add_arg_scope "
                         "get_variables_to_restore get_variables get_model_variables "
                         "model_variable variable assign_from_checkpoint_fn",
    "contrib.slim": "arg_scope fully_connected conv2d max_pool2d flatten dropout batch_norm "
                    "l2_regularizer get_variables_to_restore get_model_variables repeat stack "
                    "losses model_variable",
    "contrib.slim.losses": "softmax_cross_entropy sparse_softmax_cross_entropy "
                           "mean_squared_error get_total_loss get_regularization_losses",
    "contrib.learn": "ModeKeys datasets",
    "contrib.learn.datasets.mnist": "read_data_sets DataSet",
    "contrib.data": "Dataset Iterator TFRecordDataset batch_and_drop_remainder "
                    "shuffle_and_repeat map_and_batch parallel_interleave",
}


@pytest.mark.parametrize("module,names", sorted(CONV_AND_CONTRIB.items()))
def test_conv_and_contrib_names(module, names):
    _assert_names(module, names)


# Issue 14 (parts 4 and 8): the rest of tf.train and tf.saved_model.
TRAIN_AND_SAVED_MODEL = {
    "train": "AdadeltaOptimizer FtrlOptimizer ProximalGradientDescentOptimizer "
             "ProximalAdagradOptimizer AdagradDAOptimizer ExponentialMovingAverage "
             "inverse_time_decay natural_exp_decay polynomial_decay cosine_decay "
             "cosine_decay_restarts linear_cosine_decay noisy_linear_cosine_decay "
             "piecewise_constant_decay export_meta_graph import_meta_graph write_graph SaverDef "
             "Supervisor LooperThread basic_train_loop init_from_checkpoint warm_start "
             "VocabInfo checkpoints_iterator generate_checkpoint_state_proto Checkpoint "
             "CheckpointManager experimental ProfilerHook",
    "train.experimental": "LossScale FixedLossScale DynamicLossScale "
                          "MixedPrecisionLossScaleOptimizer enable_mixed_precision_graph_rewrite "
                          "disable_mixed_precision_graph_rewrite",
    "saved_model": "simple_save Builder load build_signature_def build_tensor_info "
                   "predict_signature_def classification_signature_def "
                   "regression_signature_def is_valid_signature get_tensor_from_tensor_info "
                   "maybe_saved_model_directory contains_saved_model main_op_with_restore "
                   "builder loader utils signature_def_utils tag_constants signature_constants "
                   "constants main_op SERVING TRAINING DEFAULT_SERVING_SIGNATURE_DEF_KEY",
    "saved_model.builder": "SavedModelBuilder",
    "saved_model.loader": "load maybe_saved_model_directory",
}


@pytest.mark.parametrize("module,names", sorted(TRAIN_AND_SAVED_MODEL.items()))
def test_train_and_saved_model_names(module, names):
    _assert_names(module, names)


# Issue 14: TF 1.0-1.3 queue-based input, readers, gfile and compat.
QUEUE_INPUT_AND_FILES = {
    "": "TFRecordReader TextLineReader FixedLengthRecordReader WholeFileReader IdentityReader "
        "ReaderBase decode_csv read_file matching_files count_up_to gfile arg_max arg_min "
        "realdiv scalar_mul div_no_nan log_sigmoid shape_n NoGradient is_tensor "
        "is_numeric_tensor get_static_value convert_to_tensor_or_indexed_slices get_seed "
        "OpError PriorityQueue queue write_file decode_compressed",
    "train": "string_input_producer input_producer range_input_producer slice_input_producer "
             "limit_epochs match_filenames_once batch shuffle_batch batch_join "
             "shuffle_batch_join maybe_batch maybe_shuffle_batch maybe_batch_join "
             "maybe_shuffle_batch_join",
    "io": "decode_csv read_file write_file decode_compressed matching_files match_filenames_once gfile QueueBase "
          "PaddingFIFOQueue RandomShuffleQueue PriorityQueue",
    "queue": "QueueBase FIFOQueue PaddingFIFOQueue RandomShuffleQueue PriorityQueue",
    "gfile": "GFile Open FastGFile Exists MakeDirs MkDir ListDirectory Glob Remove "
             "DeleteRecursively Copy Rename Walk IsDirectory Stat",
    "io.gfile": "GFile exists makedirs mkdir listdir glob remove rmtree copy rename walk isdir "
                "stat join",
    "compat": "as_bytes as_text as_str as_str_any path_to_str bytes_or_text_types "
              "integral_types real_types complex_types dimension_value dimension_at_index v1",
}


@pytest.mark.parametrize("module,names", sorted(QUEUE_INPUT_AND_FILES.items()))
def test_queue_input_and_file_names(module, names):
    _assert_names(module, names)


# Issue 13: Horovod's TF 1.x API (`import tensorweave.horovod as hvd`) and the communicator.
ALLREDUCE = {
    "tensorweave.horovod": "init shutdown is_initialized size rank local_size local_rank "
                           "cross_size cross_rank mpi_enabled mpi_built mpi_threads_supported "
                           "allreduce allgather broadcast alltoall join "
                           "broadcast_global_variables broadcast_variables "
                           "BroadcastGlobalVariablesHook DistributedOptimizer Compression "
                           "Compressor Average Sum Min Max Product",
    "tensorweave.collective": "init shutdown is_initialized communicator Communicator",
}


@pytest.mark.parametrize("module,names", sorted(ALLREDUCE.items()))
def test_allreduce_names(module, names):
    namespace = importlib.import_module(module)
    missing = [n for n in names.split() if not hasattr(namespace, n)]
    assert not missing, f"{module} lacks {missing}"
# Recurrent nets (issue 14), kept apart so that merges do not touch the lists above.
RNN_TOP_LEVEL = "TensorArray map_fn scan foldl foldr reverse_sequence".split()
RNN_RANDOM = ["stateless_uniform"]
RNN_NN = ("dynamic_rnn static_rnn static_bidirectional_rnn bidirectional_dynamic_rnn raw_rnn "
          "rnn_cell").split()
RNN_CELLS = ("RNNCell LayerRNNCell BasicRNNCell BasicLSTMCell LSTMCell GRUCell MultiRNNCell "
             "DropoutWrapper ResidualWrapper DeviceWrapper LSTMStateTuple").split()


def test_recurrent_net_names():
    missing = [n for n in RNN_TOP_LEVEL if not hasattr(tf, n)]
    missing += [f"nn.{n}" for n in RNN_NN if not hasattr(tf.nn, n)]
    missing += [f"nn.rnn_cell.{n}" for n in RNN_CELLS if not hasattr(tf.nn.rnn_cell, n)]
    missing += [f"random.{n}" for n in RNN_RANDOM if not hasattr(tf.random, n)]
    assert not missing, f"missing: {missing}"
# Issue 17 (tf.keras half): Keras in graph mode.
KERAS = {
    "keras": "Sequential Model Input layers models optimizers losses metrics callbacks backend "
             "datasets utils initializers regularizers activations constraints",
    "keras.layers": "Layer Input InputLayer Dense Conv1D Conv2D Conv3D MaxPooling2D "
                    "AveragePooling2D GlobalAveragePooling2D GlobalMaxPooling2D Flatten Dropout "
                    "BatchNormalization Embedding Activation Reshape Permute RepeatVector "
                    "Lambda Concatenate Add Subtract Multiply Average Maximum Minimum "
                    "concatenate add LSTM GRU SimpleRNN RNN LSTMCell GRUCell SimpleRNNCell "
                    "Conv2DTranspose ZeroPadding2D UpSampling2D LeakyReLU ReLU ELU Softmax "
                    "SeparableConv2D DepthwiseConv2D "
                    "TimeDistributed Bidirectional LayerNormalization GaussianNoise "
                    "GaussianDropout SpatialDropout1D SpatialDropout2D",
    "keras.models": "Model Sequential save_model load_model model_from_json model_from_config",
    "keras.optimizers": "Optimizer SGD Adam RMSprop Adagrad Adadelta Adamax TFOptimizer get",
    "keras.losses": "mean_squared_error mse mae categorical_crossentropy "
                    "sparse_categorical_crossentropy binary_crossentropy Loss MeanSquaredError "
                    "CategoricalCrossentropy SparseCategoricalCrossentropy BinaryCrossentropy get",
    "keras.metrics": "binary_accuracy categorical_accuracy sparse_categorical_accuracy "
                     "top_k_categorical_accuracy Accuracy CategoricalAccuracy "
                     "SparseCategoricalAccuracy BinaryAccuracy Mean get",
    "keras.callbacks": "Callback History ModelCheckpoint EarlyStopping TensorBoard "
                       "LearningRateScheduler ReduceLROnPlateau CSVLogger LambdaCallback "
                       "TerminateOnNaN",
    "keras.backend": "get_session set_session clear_session learning_phase set_learning_phase "
                     "floatx set_floatx epsilon image_data_format get_value set_value "
                     "batch_get_value batch_set_value placeholder variable function int_shape",
    "keras.utils": "to_categorical normalize get_file Sequence",
    "keras.preprocessing.sequence": "pad_sequences",
    "keras.datasets.mnist": "load_data",
    "keras.initializers": "glorot_uniform he_normal Zeros Ones RandomNormal get",
    "keras.regularizers": "l1 l2 l1_l2 L1L2 get",
    "keras.activations": "relu softmax sigmoid tanh linear get",
}


@pytest.mark.parametrize("module,names", sorted(KERAS.items()))
def test_keras_names(module, names):
    _assert_names(module, names)


# Issue 17: tf.estimator and tf.feature_column.
ESTIMATOR_AND_FEATURE_COLUMN = {
    "estimator": "Estimator EstimatorSpec ModeKeys RunConfig TrainSpec EvalSpec "
                 "train_and_evaluate WarmStartSettings Exporter FinalExporter LatestExporter "
                 "BestExporter inputs export LinearClassifier "
                 "LinearRegressor DNNClassifier DNNRegressor DNNLinearCombinedClassifier "
                 "DNNLinearCombinedRegressor BaselineClassifier BaselineRegressor add_metrics "
                 "classifier_parse_example_spec regressor_parse_example_spec "
                 "SessionRunHook SessionRunArgs "
                 "SessionRunContext SessionRunValues CheckpointSaverHook "
                 "CheckpointSaverListener FeedFnHook FinalOpsHook GlobalStepWaiterHook "
                 "LoggingTensorHook NanLossDuringTrainingError NanTensorHook SecondOrStepTimer "
                 "StepCounterHook StopAtStepHook SummarySaverHook",
    "estimator.inputs": "numpy_input_fn",
    "estimator.export": "ServingInputReceiver TensorServingInputReceiver "
                        "build_parsing_serving_input_receiver_fn "
                        "build_raw_serving_input_receiver_fn ExportOutput ClassificationOutput "
                        "RegressionOutput PredictOutput",
    "feature_column": "numeric_column bucketized_column categorical_column_with_vocabulary_list "
                      "categorical_column_with_identity indicator_column embedding_column "
                      "input_layer linear_model make_parse_example_spec "
                      "categorical_column_with_hash_bucket",
}


@pytest.mark.parametrize("module,names", sorted(ESTIMATOR_AND_FEATURE_COLUMN.items()))
def test_estimator_and_feature_column_names(module, names):
    _assert_names(module, names)


QUANTIZATION_FUNCTIONS_AND_SETTINGS = {  # issue 14
    "": "bfloat16 qint8 quint8 qint16 quint16 qint32 QUANTIZED_DTYPES resource quantize "
        "quantize_v2 dequantize quantized_concat to_bfloat16 function wrap_function "
        "CriticalSection variable_creator_scope get_session_handle get_session_tensor "
        "delete_session_tensor extract_volume_patches matrix_square_root random_index_shuffle "
        "load_op_library load_library load_file_system_library CXX11_ABI_FLAG CXX_VERSION "
        "MONOLITHIC_BUILD autograph sysconfig experimental enable_control_flow_v2",
    "quantization": "quantize dequantize quantize_and_dequantize quantize_and_dequantize_v2 "
                    "quantized_concat fake_quant_with_min_max_args fake_quant_with_min_max_vars",
    "dtypes": "bfloat16 qint8 quint8 qint16 quint16 qint32 QUANTIZED_DTYPES resource",
    "dtypes.experimental": "float8_e4m3fn float8_e5m2 int4 uint4",
    "nn": "pool fractional_max_pool fractional_avg_pool quantized_conv2d quantized_avg_pool "
          "quantized_max_pool quantized_relu_x",
    "nn.experimental": "stateless_dropout general_dropout",
    "autograph": "to_graph to_code do_not_convert set_verbosity trace",
    "autograph.experimental": "Feature do_not_convert set_loop_options",
    "debugging": "enable_check_numerics disable_check_numerics set_log_device_placement "
                 "get_log_device_placement is_traceback_filtering_enabled",
    "debugging.experimental": "enable_dump_debug_info disable_dump_debug_info",
    "test": "StubOutForTesting benchmark_config disable_with_predicate is_cpu_target_available "
            "test_src_dir_path with_eager_op_as_function",
    "config": "run_functions_eagerly functions_run_eagerly experimental_connect_to_cluster",
    "config.experimental": "get_memory_info get_memory_usage reset_memory_stats "
                           "set_device_policy get_device_policy ClusterDeviceFilters",
    "config.optimizer": "set_jit get_jit set_experimental_options get_experimental_options",
    "sysconfig": "get_include get_lib get_compile_flags get_link_flags get_build_info",
    "experimental": "Optional function_executor_type output_all_intermediates async_scope",
}


@pytest.mark.parametrize("module,names", sorted(QUANTIZATION_FUNCTIONS_AND_SETTINGS.items()))
def test_quantization_function_and_settings_names(module, names):
    _assert_names(module, names)


# Issue 13, process sets and the rest of Horovod 0.2x's TF API; kept apart for merges.
HOROVOD_PROCESS_SETS = ("ProcessSet global_process_set add_process_set remove_process_set "
                        "process_set_by_id process_sets reducescatter grouped_allreduce "
                        "grouped_allgather grouped_reducescatter Adasum size_op rank_op "
                        "local_size_op local_rank_op process_set_included_op nccl_built "
                        "gloo_built gloo_enabled ccl_built ddl_built cuda_built rocm_built "
                        "allgather_object broadcast_object broadcast_object_fn is_homogeneous")


def test_horovod_process_set_names():
    namespace = importlib.import_module("tensorweave.horovod")
    missing = [n for n in HOROVOD_PROCESS_SETS.split() if not hasattr(namespace, n)]
    assert not missing, f"tensorweave.horovod lacks {missing}"
