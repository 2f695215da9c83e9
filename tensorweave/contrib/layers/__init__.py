"""`tf.contrib.layers`: layer functions with arg_scope defaults, initializers, regularizers,
optimize_loss and summary helpers. Re-exports only."""
from tensorweave.contrib.framework.arg_scope import arg_scope, add_arg_scope  # noqa: F401
from tensorweave.contrib.layers.layers import (fully_connected, convolution,  # noqa: F401
                                               convolution1d, convolution2d, convolution3d,
                                               conv1d, conv2d, conv3d, convolution2d_transpose,
                                               conv2d_transpose, max_pool2d, avg_pool2d,
                                               max_pool3d, avg_pool3d, flatten, dropout,
                                               one_hot_encoding, embed_sequence, repeat, stack,
                                               separable_convolution2d, separable_conv2d,
                                               bias_add, softmax)
from tensorweave.contrib.layers.normalization import batch_norm, layer_norm  # noqa: F401
from tensorweave.contrib.layers.initializers import (xavier_initializer,  # noqa: F401
                                                     xavier_initializer_conv2d,
                                                     variance_scaling_initializer)
from tensorweave.contrib.layers.regularizers import (l1_regularizer, l2_regularizer,  # noqa: F401
                                                     l1_l2_regularizer, sum_regularizer,
                                                     apply_regularization)
from tensorweave.contrib.layers.optimizers import (optimize_loss,  # noqa: F401
                                                   OPTIMIZER_CLS_NAMES, OPTIMIZER_SUMMARIES)
from tensorweave.contrib.layers import utils  # noqa: F401
from tensorweave.contrib.layers.summaries import (summarize_tensor,  # noqa: F401
                                                  summarize_tensors, summarize_activation,
                                                  summarize_activations, summarize_collection,
                                                  summarize_variables, summarize_weights,
                                                  summarize_biases)
from tensorweave.feature_column.contrib_columns import (  # noqa: F401,E402
    real_valued_column, sparse_column_with_keys, sparse_column_with_hash_bucket,
    sparse_column_with_integerized_feature, one_hot_column, embedding_column,
    bucketized_column, input_from_feature_columns, infer_real_valued_columns_from_input,
    crossed_column, sparse_column_with_vocabulary_file, weighted_sparse_column,
    shared_embedding_columns, create_feature_spec_for_parsing,
    parse_feature_columns_from_examples, check_feature_columns, infer_real_valued_columns,
    weighted_sum_from_feature_columns, joint_weighted_sum_from_feature_columns)
from tensorweave.contrib.layers.normalization_more import (  # noqa: F401,E402
    instance_norm, group_norm, unit_norm, maxout, linear, relu, relu6)
from tensorweave.contrib.layers.layers_more import (  # noqa: F401,E402
    convolution3d_transpose, conv3d_transpose, convolution2d_in_plane, conv2d_in_plane,
    dense_to_sparse, scale_gradient, spatial_softmax, images_to_sequence, sequence_to_images,
    legacy_fully_connected, legacy_linear, legacy_relu, embedding_lookup_unique)
from tensorweave.ops.embedding_ops import safe_embedding_lookup_sparse  # noqa: F401,E402
