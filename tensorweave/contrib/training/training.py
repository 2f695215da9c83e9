"""`tf.contrib.training`'s training loop pieces (also slim.learning's): create_train_op (a
loss tensor whose evaluation takes one optimizer step), gradient transforms and summaries, and
`train` (a MonitoredTrainingSession loop until a hook says stop)."""
from tensorweave.contrib.layers.optimizers import _multiply
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import clip_ops, control_flow_ops, debug_ops
from tensorweave.ops import summary_ops
from tensorweave.train import monitored_session
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.training_util import get_or_create_global_step

_USE_GLOBAL_STEP = 0  # create_train_op's default: the graph's global step


def add_gradients_summaries(grads_and_vars):
    """A histogram of each gradient and a scalar of its norm, named after its variable."""
    summaries = []
    for grad, var in grads_and_vars:
        if grad is None:
            continue
        values = grad.values if isinstance(grad, IndexedSlices) else grad
        name = var.op.name
        summaries.append(summary_ops.histogram(name + "_gradient", values))
        summaries.append(summary_ops.scalar(name + "_gradient_norm",
                                            clip_ops.global_norm([values])))
    return summaries


def clip_gradient_norms(gradients_to_variables, max_norm):
    """Each gradient clipped to `max_norm` (its own norm; IndexedSlices by their values)."""
    clipped = []
    for grad, var in gradients_to_variables:
        if isinstance(grad, IndexedSlices):
            grad = IndexedSlices(clip_ops.clip_by_norm(grad.values, max_norm), grad.indices,
                                 grad.dense_shape)
        elif grad is not None:
            grad = clip_ops.clip_by_norm(grad, max_norm)
        clipped.append((grad, var))
    return clipped


def multiply_gradients(grads_and_vars, gradient_multipliers):
    """Gradients scaled per variable; `gradient_multipliers` maps variables (or their names)
    to factors."""
    if not isinstance(gradient_multipliers, dict) or not gradient_multipliers:
        raise ValueError("gradient_multipliers must be a non-empty dict of variable -> factor")
    return _multiply(list(grads_and_vars), gradient_multipliers)


def create_train_op(total_loss, optimizer, global_step=_USE_GLOBAL_STEP, update_ops=None,
                    variables_to_train=None, transform_grads_fn=None, summarize_gradients=False,
                    gate_gradients=Optimizer.GATE_OP, aggregation_method=None,
                    colocate_gradients_with_ops=False, check_numerics=True):
    """`total_loss` (checked for inf/nan) that runs the update ops and one step of `optimizer`
    on it first; added to the TRAIN_OP collection."""
    graph = graph_lib.get_default_graph()
    if global_step is _USE_GLOBAL_STEP:
        global_step = get_or_create_global_step()
    if update_ops is None:
        update_ops = graph.get_collection(GraphKeys.UPDATE_OPS)
    with graph.name_scope("train_op"):
        if update_ops:
            total_loss = control_flow_ops.with_dependencies(list(update_ops), total_loss)
        if variables_to_train is None:
            variables_to_train = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        grads = optimizer.compute_gradients(
            total_loss, list(variables_to_train), gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops)
        if transform_grads_fn is not None:
            grads = transform_grads_fn(grads)
        if summarize_gradients:
            with graph.name_scope("summarize_grads"):
                add_gradients_summaries(grads)
        update = optimizer.apply_gradients(grads, global_step=global_step)
        if check_numerics:
            total_loss = debug_ops.check_numerics(total_loss, "LossTensor is inf or nan")
        train_op = control_flow_ops.with_dependencies([update], total_loss)
    train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
    if train_op not in train_ops:
        train_ops.append(train_op)
    return train_op


def train(train_op, logdir, master="", is_chief=True, scaffold=None, hooks=None,
          chief_only_hooks=None, save_checkpoint_secs=600, save_summaries_steps=100,
          config=None, max_wait_secs=7200, run_metadata=None):
    """Runs train_op in a MonitoredTrainingSession (checkpoints and summaries in `logdir`)
    until a hook asks to stop; returns the last value of train_op."""
    if logdir is None and is_chief and (save_checkpoint_secs or save_summaries_steps):
        raise ValueError("logdir cannot be None when save_checkpoint_secs or "
                         "save_summaries_steps is set")
    loss = None
    with monitored_session.MonitoredTrainingSession(
            master=master, is_chief=is_chief, checkpoint_dir=logdir, scaffold=scaffold,
            hooks=hooks, chief_only_hooks=chief_only_hooks,
            save_checkpoint_secs=save_checkpoint_secs,
            save_summaries_steps=save_summaries_steps, config=config,
            max_wait_secs=max_wait_secs) as session:
        while not session.should_stop():
            loss = session.run(train_op, run_metadata=run_metadata)
    return loss

