"""`slim.learning`: TF-Slim's training loop. `create_train_op` is contrib.training's with
gradient clipping and multipliers; `train` runs `train_step_fn` under a tf.train.Supervisor
(checkpoints every save_interval_secs and summaries every save_summaries_secs in `logdir`,
queue runners started, `init_fn` for warm starts) until number_of_steps, an OutOfRangeError
from the input, or a stop request; the chief saves a final checkpoint."""
import logging
import time

from tensorweave.contrib.training.training import (add_gradients_summaries,  # noqa: F401
                                                   clip_gradient_norms, multiply_gradients)
from tensorweave.contrib.training import training as _training
from tensorweave.framework import errors
from tensorweave.ops import math_ops
from tensorweave.framework.constant_op import constant
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.saver import Saver
from tensorweave.train.supervisor import Supervisor
from tensorweave.train.training_util import get_or_create_global_step

_USE_DEFAULT = 0
_USE_GLOBAL_STEP = _training._USE_GLOBAL_STEP
_log = logging.getLogger("tensorweave.slim")


def create_train_op(total_loss, optimizer, global_step=_USE_GLOBAL_STEP, update_ops=None,
                    variables_to_train=None, clip_gradient_norm=0, summarize_gradients=False,
                    gate_gradients=Optimizer.GATE_OP, aggregation_method=None,
                    colocate_gradients_with_ops=False, gradient_multipliers=None,
                    check_numerics=True):
    """contrib.training.create_train_op, multiplying then clipping each gradient first."""
    def transform(grads):
        if gradient_multipliers:
            grads = multiply_gradients(grads, gradient_multipliers)
        if clip_gradient_norm > 0:
            grads = clip_gradient_norms(grads, clip_gradient_norm)
        return grads

    return _training.create_train_op(
        total_loss, optimizer, global_step=global_step, update_ops=update_ops,
        variables_to_train=variables_to_train, transform_grads_fn=transform,
        summarize_gradients=summarize_gradients, gate_gradients=gate_gradients,
        aggregation_method=aggregation_method,
        colocate_gradients_with_ops=colocate_gradients_with_ops,
        check_numerics=check_numerics)


def train_step(sess, train_op, global_step, train_step_kwargs):
    """One step: (the loss, whether to stop), logging every `should_log` step."""
    start = time.time()
    total_loss, step = sess.run([train_op, global_step])
    elapsed = time.time() - start
    if "should_log" in train_step_kwargs and sess.run(train_step_kwargs["should_log"]):
        _log.info("global step %d: loss = %.4f (%.3f sec/step)", step, total_loss, elapsed)
    should_stop = bool(sess.run(train_step_kwargs["should_stop"])) \
        if "should_stop" in train_step_kwargs else False
    return total_loss, should_stop


def train(train_op, logdir, train_step_fn=train_step, train_step_kwargs=_USE_DEFAULT,
          log_every_n_steps=1, graph=None, master="", is_chief=True, global_step=None,
          number_of_steps=None, init_op=_USE_DEFAULT, init_feed_dict=None,
          local_init_op=_USE_DEFAULT, init_fn=None, ready_op=_USE_DEFAULT,
          summary_op=_USE_DEFAULT, save_summaries_secs=600, summary_writer=_USE_DEFAULT,
          startup_delay_steps=0, saver=None, save_interval_secs=600, sync_optimizer=None,
          session_config=None, session_wrapper=None, trace_every_n_steps=None,
          ignore_live_threads=False):
    """Trains until number_of_steps (or the input ends); returns the last loss."""
    if train_op is None:
        raise ValueError("train_op cannot be None.")
    if logdir is None and (summary_op != _USE_DEFAULT or saver is not None):
        raise ValueError("Cannot provide summary_op or saver when logdir is None")
    if sync_optimizer is not None:
        raise ValueError("slim.learning.train: sync_optimizer is not supported; use "
                         "tf.train.SyncReplicasOptimizer with MonitoredTrainingSession")
    graph = graph or train_op.graph
    with graph.as_default():
        global_step = global_step if global_step is not None else get_or_create_global_step()
        saver = saver if saver is not None else Saver()
        if train_step_kwargs == _USE_DEFAULT:
            train_step_kwargs = {"should_log": math_ops.equal(
                math_ops.floormod(global_step, log_every_n_steps), 0)}
            train_step_kwargs["should_stop"] = math_ops.greater_equal(
                global_step, number_of_steps) if number_of_steps else constant(False)
    default = Supervisor.USE_DEFAULT
    supervisor = Supervisor(
        graph=graph, is_chief=is_chief, logdir=logdir,
        init_op=default if init_op == _USE_DEFAULT else init_op, init_feed_dict=init_feed_dict,
        local_init_op=default if local_init_op == _USE_DEFAULT else local_init_op,
        ready_op=default if ready_op == _USE_DEFAULT else ready_op,
        summary_op=default if summary_op == _USE_DEFAULT else summary_op,
        summary_writer=default if summary_writer == _USE_DEFAULT else summary_writer,
        global_step=global_step, saver=saver, save_summaries_secs=save_summaries_secs,
        save_model_secs=save_interval_secs, init_fn=init_fn)
    total_loss = None
    with supervisor.managed_session(master, start_standard_services=False,
                                    config=session_config) as sess:
        if session_wrapper is not None:
            sess = session_wrapper(sess)
        if is_chief and logdir:
            supervisor.start_standard_services(sess)
        elif not is_chief and startup_delay_steps > 0:
            _wait_for_step(sess, global_step, startup_delay_steps, supervisor)
        supervisor.start_queue_runners(sess)
        try:
            while not supervisor.should_stop():
                total_loss, should_stop = train_step_fn(sess, train_op, global_step,
                                                        train_step_kwargs)
                if should_stop:
                    supervisor.request_stop()
                    break
        except errors.OutOfRangeError as exc:
            _log.info("Caught OutOfRangeError. Stopping Training. %s", exc)
        # Stop and join the services first: the checkpoint thread's save at start must not land
        # after the final save (it would become the latest checkpoint).
        supervisor.stop(close_summary_writer=False, ignore_live_threads=ignore_live_threads)
        if logdir and supervisor.is_chief:
            supervisor.saver.save(sess, supervisor.save_path, global_step=supervisor.global_step)
    return total_loss


def _wait_for_step(sess, global_step, step, supervisor):
    while not supervisor.should_stop() and sess.run(global_step) < step:
        time.sleep(1.0)

