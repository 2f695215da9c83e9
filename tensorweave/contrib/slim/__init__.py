"""`tf.contrib.slim`: arg_scope, the contrib layers, losses, initializers, regularizers and the
model-variable helpers under one name, as TF-Slim programs use them. Re-exports only."""
from tensorweave.contrib.framework import (arg_scope, add_arg_scope,  # noqa: F401
                                           current_arg_scope, has_arg_scope,
                                           arg_scoped_arguments, variable, model_variable,
                                           add_model_variable, get_variables,
                                           get_model_variables, get_local_variables,
                                           get_trainable_variables, get_variables_to_restore,
                                           get_variables_by_name, get_variables_by_suffix,
                                           get_unique_variable, assign_from_checkpoint_fn,
                                           get_global_step, create_global_step,
                                           get_or_create_global_step)
from tensorweave.contrib.layers import (fully_connected, convolution, convolution1d,  # noqa: F401
                                        convolution2d, convolution3d, conv1d, conv2d, conv3d,
                                        convolution2d_transpose, conv2d_transpose, max_pool2d,
                                        avg_pool2d, max_pool3d, avg_pool3d, flatten, dropout,
                                        one_hot_encoding, embed_sequence, repeat, stack,
                                        batch_norm, layer_norm, xavier_initializer,
                                        xavier_initializer_conv2d, variance_scaling_initializer,
                                        l1_regularizer, l2_regularizer, l1_l2_regularizer,
                                        sum_regularizer, apply_regularization, optimize_loss,
                                        summarize_tensor, summarize_tensors,
                                        summarize_activation, summarize_collection,
                                        separable_convolution2d, separable_conv2d, bias_add,
                                        softmax)
from tensorweave.contrib import losses  # noqa: F401
from tensorweave.contrib.framework import variables  # noqa: F401
from tensorweave.contrib.layers import initializers, regularizers  # noqa: F401
from tensorweave.contrib.slim import learning  # noqa: F401,E402
from tensorweave.contrib import metrics  # noqa: F401,E402
from tensorweave.contrib.slim import nets  # noqa: F401,E402
from tensorweave.contrib.layers import utils  # noqa: F401,E402
