"""The standard hooks: stop at a step, save checkpoints, count and log steps, log tensors, stop
on NaN, run final ops, feed, wait for the global step, write summaries (TF 1.x semantics,
session_run_hook.py), and StopServersHook: the chief's end of training stops the parameter
servers (not in TF, where ps processes never exit; tensorflow/tensorflow#4713).
"""
import os
import time

import numpy as np

from tensorweave.distributed import request_shutdown
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.framework import event_file
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.protos import summary_pb2
from tensorweave.platform import tf_logging as logging
from tensorweave.train import training_util
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly one)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps should be provided.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at `step`; returns (seconds, steps) since the previous one."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


def _global_step_or_fail(hook_name):
    step = training_util.get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or `num_steps` more steps)."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be non-negative.")
        if last_step is not None and last_step < 0:
            raise ValueError("last_step must be non-negative.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _global_step_or_fail("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The fetched value may predate this step's increment: check again before stopping.
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._global_step_tensor)) >= self._last_step:
                run_context.request_stop()

    @property
    def last_step(self):
        return self._last_step


class CheckpointSaverListener:
    """Called around each save of a CheckpointSaverHook; after_save returning True stops."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session is made, every N seconds or steps, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = f"{checkpoint_dir}/{checkpoint_basename}"
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self.saved_steps = []  # the global steps saved, for tests and logs

    def begin(self):
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        self._global_step_tensor = _global_step_or_fail("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        step = int(session.run(self._global_step_tensor))
        self._save(session, step)  # the state at the start (restored or initialised)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):
            step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._global_step_tensor))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = graph_lib.get_collection(GraphKeys.SAVERS)
        if len(savers) != 1:
            raise RuntimeError(f"CheckpointSaverHook needs exactly one saver in the SAVERS "
                               f"collection, found {len(savers)}; pass saver= or scaffold=.")
        return savers[0]

    def _save(self, session, step):
        logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        self.saved_steps.append(step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logging.info("A CheckpointSaverListener requested that training be stopped.")
                should_stop = True
        return should_stop


class StepCounterHook(SessionRunHook):
    """Logs global steps per second every N steps or seconds (`rates` keeps them); with
    `output_dir` or `summary_writer`, also writes them as the summary "global_step/sec"."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None, steps_per_run=1):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir = output_dir
        self._summary_writer = summary_writer
        self.rates = []

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = event_file.writer_for(self._output_dir)
        self._global_step_tensor = _global_step_or_fail("StepCounterHook")
        self._summary_tag = self._global_step_tensor.op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            elapsed_secs, elapsed_steps = self._timer.update_last_triggered_step(step)
            if elapsed_secs:
                rate = elapsed_steps / elapsed_secs
                self.rates.append(rate)
                logging.info("global_step/sec: %g (global step %d)", rate, step)
                if self._summary_writer is not None:
                    summary = summary_pb2.Summary()
                    summary.value.add(tag=self._summary_tag, simple_value=rate)
                    self._summary_writer.add_summary(summary, step)


class SummarySaverHook(SessionRunHook):
    """Writes the result of `summary_op` (a summary tensor or a list of them; by default the
    scaffold's, i.e. tf.summary.merge_all()) every `save_steps` steps or `save_secs` seconds,
    to `summary_writer` or the shared writer of `output_dir`, at the global step. The first
    step also writes a SessionLog START, which tells TensorBoard a run (re)started there."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._timer = SecondOrStepTimer(every_steps=save_steps, every_secs=save_secs)
        self._output_dir = output_dir
        self._summary_writer = summary_writer
        self._scaffold = scaffold
        self._summary_op = summary_op

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = event_file.writer_for(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _global_step_or_fail("SummarySaverHook")

    def _summary_ops(self):
        summary_op = self._summary_op if self._summary_op is not None else \
            self._scaffold.summary_op
        if summary_op is None:
            return None
        return list(summary_op) if isinstance(summary_op, (list, tuple)) else [summary_op]

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None or
                                 self._timer.should_trigger_for_step(self._next_step))
        fetches = {"global_step": self._global_step_tensor}
        summary_ops = self._summary_ops() if self._request_summary else None
        if summary_ops:
            fetches["summary"] = summary_ops
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        if self._summary_writer is None:
            return
        # A fetched global step may or may not include this step's increment (it is read
        # before or after the update, e.g. on a parameter server): read it exactly where it
        # matters, when writing and when the timer could trigger for the next step.
        step = int(run_values.results["global_step"])
        if (self._next_step is None or self._request_summary or
                self._timer.should_trigger_for_step(step + 2)):
            step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(
                summary_pb2.SessionLog(status=summary_pb2.SessionLog.START), step)
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session=None):
        if self._summary_writer is not None:
            self._summary_writer.flush()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of tensors every N local steps or seconds (and/or at the end)."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = [t if isinstance(t, str) else t.name for t in tensors]
            tensors = dict(zip(self._tag_order, tensors))
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._log_at_end = at_end
        self._timer = None if only_log_at_end else SecondOrStepTimer(every_secs=every_n_secs,
                                                                     every_steps=every_n_iter)
        self._iter_count = 0
        self.logged = []  # the dicts logged, for tests

    def begin(self):
        graph = graph_lib.get_default_graph()
        self._current = {tag: graph.as_graph_element(t) if isinstance(t, str) else t
                         for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer is not None and \
            self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log(self, values):
        self.logged.append(values)
        if self._formatter is not None:
            logging.info(self._formatter(values))
        else:
            logging.info(", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order))

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._timer.update_last_triggered_step(self._iter_count)
            self._log(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log(session.run(self._current))


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (or stops) when the loss becomes NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results).any():
            if self._fail_on_nan_loss:
                logging.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError
            logging.warning("Model diverged with loss = NaN. Stopping training.")
            run_context.request_stop()


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; `final_ops_values` holds the result."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)


class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()` to the feeds of every step."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Holds this worker's first step until the global step reaches `wait_until_step` (lets
    the chief get ahead, as TF uses it to stagger worker starts)."""

    _POLL_SECS = 0.1

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _global_step_or_fail("GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started or self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        last_logged = None
        while True:
            current = int(run_context.session.run(self._global_step_tensor))
            if current >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if last_logged is None or time.time() - last_logged > 30:
                logging.info("Waiting for global step %d before starting training (now %d).",
                             self._wait_until_step, current)
                last_logged = time.time()
            time.sleep(self._POLL_SECS)


class StopServersHook(SessionRunHook):
    """At the end of training (the monitored session's normal end), asks every task of
    `job_name` in `cluster` to stop, so their `server.join()` returns and they exit. Give it
    to the chief (`chief_only_hooks`)."""

    def __init__(self, cluster, job_name="ps", reason="training ended", timeout=5.0):
        self._cluster = ClusterSpec(cluster)
        self._job_name = job_name
        self._reason = reason
        self._timeout = timeout
        self.stopped = []  # the addresses that acknowledged

    def end(self, session):
        for index in self._cluster.task_indices(self._job_name):
            address = self._cluster.task_address(self._job_name, index)
            if request_shutdown(address, self._reason, self._timeout):
                self.stopped.append(address)
            else:
                logging.warning("Could not ask /job:%s/task:%d (%s) to stop: it did not answer",
                                self._job_name, index, address)
