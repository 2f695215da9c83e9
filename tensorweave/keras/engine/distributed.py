"""tf.keras under a tf.distribute strategy: a model compiled inside `strategy.scope()`
(its weights made there, so placed by the strategy) trains with every replica.

In one process (MirroredStrategy, CentralStorageStrategy) each fed batch (inputs, targets,
sample weights) is split by rows among the replicas; `strategy.run` builds the model's
forward and weighted loss on every slice (on that replica's device), and the optimizer
minimises the MEAN of the replicas' losses (plus the model's regularisation losses once): its
gradient is the mean of the replicas' gradients, the gradient of the whole batch when the
slices are equal. Between processes (MultiWorkerMirroredStrategy, one replica each) the
optimizer's update is built inside `strategy.run` on this process's loss divided by the
number of replicas, so its apply_gradients sums the gradients across the workers (collective
allreduce, through merge_call: train/optimizer.py) before the one update. The loss and metrics
fit reports are those of this process's batch, read before the update.
"""
from tensorweave.distribute import strategy as strategy_lib
from tensorweave.distribute.input_lib import split_rows
from tensorweave.distribute.values import PerReplica
from tensorweave.ops import array_ops, math_ops


def strategy_of_compile():
    """The strategy of the enclosing scope when it has more than one replica, else None."""
    if not strategy_lib.has_strategy():
        return None
    strategy = strategy_lib.get_strategy()
    return strategy if strategy.num_replicas_in_sync > 1 else None


def optimizer_updates(model, strategy, weighted_mean_loss):
    """The model optimizer's update ops for one step under `strategy` (see above)."""
    local = len(strategy.extended.worker_devices)
    if local == strategy.num_replicas_in_sync:
        loss = replicated_loss(model, strategy, weighted_mean_loss)
        return model.optimizer.get_updates(loss, model.trainable_weights)
    if local != 1:
        raise ValueError(f"tf.keras under {type(strategy).__name__}: several replicas per "
                         "process and several processes at once are not supported")
    share = model.total_loss * math_ops.cast(1.0 / strategy.num_replicas_in_sync,
                                             model.total_loss.dtype)
    with strategy.scope():
        updates = strategy.run(lambda: model.optimizer.get_updates(share,
                                                                   model.trainable_weights))
    return [op for leaf in updates for op in strategy.experimental_local_results(leaf)]


def replicated_loss(model, strategy, weighted_mean_loss):
    """The strategy's MEAN over the replicas of the model's loss on each replica's rows
    (`weighted_mean_loss(per_example_fn, target, output, weight)`: the loss of one output)."""
    count = len(strategy.extended.worker_devices)
    inputs = [PerReplica(split_rows(x, count)) for x in model.inputs]
    targets = [PerReplica(split_rows(t, count)) for t in model.targets]
    # a fed weight per row, or the default [1.] broadcast to every row before the split
    weights = [PerReplica(split_rows(w + array_ops.zeros(array_ops.shape(t)[:1], w.dtype),
                                     count)) for w, t in zip(model.sample_weights,
                                                            model.targets)]

    def replica_loss(inputs, targets, weights):
        outputs = model(inputs if len(inputs) > 1 else inputs[0])
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        total = None
        for position, (index, per_example_fn, loss_weight) in enumerate(model._loss_terms):
            term = weighted_mean_loss(per_example_fn, targets[position], outputs[index],
                                      weights[position]) * loss_weight
            total = term if total is None else total + term
        return total

    with strategy.scope():
        per_replica = strategy.run(replica_loss, args=(inputs, targets, weights))
        loss = strategy.reduce(strategy_lib.ReduceOp.MEAN, per_replica)
    if model.losses:
        loss = loss + math_ops.cast(math_ops.add_n(list(model.losses)), loss.dtype)
    return loss
