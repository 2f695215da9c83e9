"""`tf.nn`: re-exports."""
from tensorweave.ops.nn_ops import (relu, softmax, log_softmax, sigmoid, tanh,  # noqa: F401
                                    softmax_cross_entropy_with_logits,
                                    softmax_cross_entropy_with_logits_v2,
                                    sparse_softmax_cross_entropy_with_logits, l2_loss)
from tensorweave.ops.conv_ops import (conv2d, conv2d_backprop_input,  # noqa: F401
                                      conv2d_backprop_filter, conv2d_transpose,
                                      depthwise_conv2d, depthwise_conv2d_native,
                                      depthwise_conv2d_native_backprop_input,
                                      depthwise_conv2d_native_backprop_filter, max_pool,
                                      max_pool2d, avg_pool, avg_pool2d, bias_add)
from tensorweave.ops.activation_ops import relu6, elu, selu, softplus, leaky_relu  # noqa: F401
from tensorweave.ops.nn_impl import (dropout, moments, batch_normalization,  # noqa: F401
                                     fused_batch_norm, l2_normalize, softsign, xw_plus_b,
                                     sigmoid_cross_entropy_with_logits,
                                     weighted_cross_entropy_with_logits, in_top_k,
                                     embedding_lookup)
from tensorweave.ops.sort_ops import top_k  # noqa: F401
# Convolution and pooling variants: 1-D, 3-D, separable, atrous, by rank.
from tensorweave.ops.conv3d_ops import (conv3d, conv3d_transpose,  # noqa: F401
                                        conv3d_backprop_filter, conv3d_backprop_filter_v2,
                                        max_pool3d, avg_pool3d)
from tensorweave.ops.conv_variants import (conv1d, conv1d_transpose,  # noqa: F401
                                           separable_conv2d, max_pool1d, avg_pool1d,
                                           atrous_conv2d, atrous_conv2d_transpose, convolution,
                                           conv_transpose, max_pool_v2, avg_pool_v2,
                                           depthwise_conv2d_backprop_input,
                                           depthwise_conv2d_backprop_filter)
from tensorweave.ops.candidate_sampling_ops import (uniform_candidate_sampler,  # noqa: F401
                                                    log_uniform_candidate_sampler,
                                                    learned_unigram_candidate_sampler,
                                                    fixed_unigram_candidate_sampler,
                                                    all_candidate_sampler,
                                                    compute_accidental_hits)
from tensorweave.ops.sampled_loss_ops import nce_loss, sampled_softmax_loss  # noqa: F401
from tensorweave.ops.embedding_ops import (embedding_lookup_sparse,  # noqa: F401
                                           safe_embedding_lookup_sparse)
from tensorweave.ops.nn_compose_ops import (crelu, swish, silu, relu_layer,  # noqa: F401
                                            log_poisson_loss, sufficient_statistics,
                                            normalize_moments, weighted_moments,
                                            batch_norm_with_global_normalization,
                                            local_response_normalization, lrn, zero_fraction,
                                            compute_average_loss, scale_regularization_loss,
                                            approx_max_k, approx_min_k)
from tensorweave.ops.space_ops import (depth_to_space, space_to_depth,  # noqa: F401
                                       space_to_batch, dilation2d, erosion2d)
from tensorweave.ops.space_ops import with_space_to_batch  # noqa: F401
from tensorweave.ops.array_extra_ops import max_pool_with_argmax  # noqa: F401
from tensorweave.ops.ctc_ops import (ctc_loss, ctc_loss_v2, ctc_greedy_decoder,  # noqa: F401
                                     ctc_beam_search_decoder, ctc_beam_search_decoder_v2,
                                     collapse_repeated, ctc_unique_labels)

# Recurrent nets (issue 14): the cells as the module tf.nn.rnn_cell, and the RNN drivers.
from tensorweave import rnn_cell  # noqa: F401,E402
from tensorweave.ops.rnn import dynamic_rnn  # noqa: F401,E402
from tensorweave.ops.rnn_unrolled import (static_rnn, static_bidirectional_rnn,  # noqa: F401,E402
                                          static_state_saving_rnn,
                                          bidirectional_dynamic_rnn)
from tensorweave.ops.rnn_raw import raw_rnn  # noqa: F401,E402
from tensorweave.ops.quantized_nn_ops import (quantized_conv2d, quantized_avg_pool,  # noqa: F401,E402
                                              quantized_max_pool, quantized_relu_x)
from tensorweave.ops.fractional_pool_ops import (fractional_max_pool,  # noqa: F401,E402
                                                 fractional_avg_pool)
from tensorweave.ops.nn_extra_ops import pool  # noqa: F401,E402
from tensorweave import nn_experimental as experimental  # noqa: F401,E402
