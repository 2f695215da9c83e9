"""`tf.contrib.seq2seq.sequence_loss`: the weighted cross-entropy of a sequence of logits."""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, nn_ops, reduction_ops


def _check_rank(tensor, rank, what):
    if tensor.shape.ndims is not None and tensor.shape.ndims != rank:
        raise ValueError(f"sequence_loss: {what} must be a {rank}-D tensor "
                         f"([batch_size, sequence_length{', num_classes' if rank == 3 else ''}]"
                         f"), got shape {tensor.shape}")


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """The cross-entropy of `logits` [batch, time, classes] against the int `targets`
    [batch, time], each entry multiplied by `weights` [batch, time]. Averaging divides by the
    sum of the weights over the averaged axes; summing divides by the number of non-zero
    weights there (TF 1.x's definition, so that padding does not count). Without either, the
    result is [batch, time]; averaging or summing over one axis leaves the other."""
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("sequence_loss: average_across_timesteps and sum_over_timesteps "
                         "cannot both be True")
    if average_across_batch and sum_over_batch:
        raise ValueError("sequence_loss: average_across_batch and sum_over_batch cannot both "
                         "be True")
    with graph_lib.name_scope(name, "sequence_loss", [logits, targets, weights]):
        logits, targets = convert_to_tensor(logits), convert_to_tensor(targets)
        weights = convert_to_tensor(weights)
        _check_rank(logits, 3, "logits")
        _check_rank(targets, 2, "targets")
        _check_rank(weights, 2, "weights")
        num_classes = array_ops.shape(logits)[2]
        flat_logits = array_ops.reshape(logits, array_ops.stack([-1, num_classes]))
        flat_targets = array_ops.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = nn_ops.sparse_softmax_cross_entropy_with_logits(
                labels=flat_targets, logits=flat_logits)
        else:
            crossent = softmax_loss_function(labels=flat_targets, logits=flat_logits)
        crossent = crossent * array_ops.reshape(math_ops.cast(weights, crossent.dtype), [-1])
        weights = math_ops.cast(weights, crossent.dtype)
        if average_across_timesteps and average_across_batch:
            return math_ops.divide_no_nan(reduction_ops.reduce_sum(crossent),
                                       reduction_ops.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            count = math_ops.cast(reduction_ops.count_nonzero(weights), crossent.dtype)
            return math_ops.divide_no_nan(reduction_ops.reduce_sum(crossent), count)
        crossent = array_ops.reshape(crossent, array_ops.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return math_ops.divide_no_nan(reduction_ops.reduce_sum(crossent, axis=axis),
                                       reduction_ops.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            count = math_ops.cast(reduction_ops.count_nonzero(weights, axis=axis),
                                  crossent.dtype)
            return math_ops.divide_no_nan(reduction_ops.reduce_sum(crossent, axis=axis), count)
        return crossent

