"""`tf.nn`: re-exports."""
from tensorweave.ops.nn_ops import (relu, softmax, log_softmax, sigmoid, tanh,  # noqa: F401
                                    softmax_cross_entropy_with_logits,
                                    softmax_cross_entropy_with_logits_v2,
                                    sparse_softmax_cross_entropy_with_logits, l2_loss)
