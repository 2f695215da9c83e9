"""`tf.tpu.CrossShardOptimizer`: an optimizer whose gradients are summed over the TPU shards
(CrossReplicaSum) before the wrapped optimizer applies them; with reduction MEAN the loss is
first divided by the number of shards. Outside a TPU computation TF takes one shard (so
compute_gradients is the wrapped optimizer's), and the CrossReplicaSum in the train op fails
when run, as it does in a TF build without TPUs (ops/tpu_ops.py)."""
from tensorweave.ops import tpu_ops
from tensorweave.platform import tf_logging as logging
from tensorweave.train.optimizer import WrappingOptimizer

_REDUCTIONS = ("sum", "mean", "weighted_sum", "sum_over_batch_size", "sum_by_nonzero_weights")


class CrossShardOptimizer(WrappingOptimizer):
    def __init__(self, opt, reduction="weighted_mean", name="CrossShardOptimizer",
                 group_assignment=None):
        reduction = str(getattr(reduction, "value", reduction)).lower()
        if reduction not in ("weighted_mean",) + _REDUCTIONS:
            raise ValueError(f"CrossShardOptimizer: unsupported reduction {reduction!r}")
        super().__init__(opt, False, name)
        self._reduction, self._group_assignment = reduction, group_assignment

    def compute_gradients(self, loss, var_list=None, **kwargs):
        logging.warning("CrossShardOptimizer should be used within a TPU shard context, but "
                        "there is none: assuming 1 shard.")
        return self._optimizer.compute_gradients(loss, var_list=var_list, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        summed = [(g if g is None else tpu_ops.cross_replica_sum(g, self._group_assignment), v)
                  for g, v in grads_and_vars]
        return self._optimizer.apply_gradients(summed, global_step, name)
