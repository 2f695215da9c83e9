"""`tf.train.SessionManager`: make a session whose model is ready to train.

The chief `prepare_session`s: it restores the latest checkpoint, or runs the init op, then the
local init op, and checks that the model is ready. Other workers `wait_for_session`: they run
their local init op once the global variables are initialised, and return once the model is
ready.

Two departures from TF 1.x, both for distributed training (REFERENCE.md D.6, D.8):
- TF re-checks readiness every `recovery_wait_secs` (30 s), so workers start about 30 s after
  the chief; here the check runs every 0.1 s (never more often than `recovery_wait_secs`), on
  one session that stays open, so a worker starts within a fraction of a second. While it
  waits it logs which variables are not initialised, grouped by the task that holds them.
- When the chief makes a new session (say after a worker was restarted and a step aborted)
  and the parameter servers still hold initialised variables, it neither restores nor
  re-initialises them: progress made since the last checkpoint is kept. Only variables that
  are gone (a restarted, empty parameter server) bring back the checkpoint.
"""
import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.platform import tf_logging as logging
from tensorweave.runtime import config as config_lib
from tensorweave.runtime import session as session_lib
from tensorweave.train import checkpoint_management

_READY_POLL_SECS = 0.1
_WAIT_LOG_SECS = 5.0
# A readiness check reads a flag per variable: milliseconds. One without an answer this long
# lost its call (a silent task is failed sooner by the peer timeout): it raises
# UnavailableError, so that a MonitoredSession makes its session again, instead of waiting
# for ever (or dying of the operation timeout's DeadlineExceededError).
READY_CHECK_SECONDS = 60.0


class SessionManager:
    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else graph_lib.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        if ready_op is None and ready_for_local_init_op is not None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             "ready_op.")

    @property
    def _poll_secs(self):
        return min(_READY_POLL_SECS, self._recovery_wait_secs)

    # --- the chief ------------------------------------------------------------------------
    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A session whose model is ready: kept, restored from a checkpoint, or initialised."""
        sess = session_lib.Session(master, graph=self._graph, config=config)
        try:
            if self._global_state_is_live(sess):
                logging.info("The model's variables are initialised already (parameter "
                             "servers kept them): neither restoring nor initialising.")
            else:
                restored = self._restore_checkpoint(
                    sess, saver, checkpoint_dir, checkpoint_filename_with_path,
                    wait_for_checkpoint, max_wait_secs)
                if not restored:
                    if init_op is None and not init_fn and self._local_init_op is None:
                        raise RuntimeError("Model is not initialized and no init_op or init_fn "
                                           "or local_init_op was given")
                    if init_op is not None:
                        sess.run(init_op, feed_dict=init_feed_dict)
                    if init_fn:
                        init_fn(sess)
            local_ok, message = self._try_run_local_init_op(sess)
            if not local_ok:
                raise RuntimeError(f"Init operations did not make model ready for local_init. "
                                   f"Init op: {_name(init_op)}, init fn: {init_fn}, error: "
                                   f"{message}")
            ready, message = self._model_ready(sess)
            if not ready:
                raise RuntimeError(f"Init operations did not make model ready. Init op: "
                                   f"{_name(init_op)}, init fn: {init_fn}, local_init_op: "
                                   f"{_name(self._local_init_op)}, error: {message}")
        except BaseException:
            _safe_close(sess)
            raise
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """(session, True if its model is ready): restores a checkpoint when there is one."""
        sess = session_lib.Session(master, graph=self._graph, config=config)
        restored = self._restore_checkpoint(sess, saver, checkpoint_dir,
                                            checkpoint_filename_with_path, wait_for_checkpoint,
                                            max_wait_secs)
        local_ok, message = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        if not local_ok:
            logging.info("Restoring model from %s did not make model ready for local init: %s",
                         checkpoint_dir or checkpoint_filename_with_path, message)
            return sess, False
        ready, message = self._model_ready(sess)
        if not ready:
            logging.info("Restoring model from %s did not make model ready: %s",
                         checkpoint_dir or checkpoint_filename_with_path, message)
            return sess, False
        return sess, True

    def _global_state_is_live(self, sess):
        """True when every global variable is initialised already (on the ps tasks)."""
        check = self._ready_for_local_init_op
        if check is None:
            check = self._ready_op
        if check is None:
            return False
        return self._ready(check, sess, "")[0]

    def _restore_checkpoint(self, sess, saver, checkpoint_dir, checkpoint_filename_with_path,
                            wait_for_checkpoint, max_wait_secs):
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return True
        if not saver or not checkpoint_dir:
            return False
        deadline = time.time() + max_wait_secs
        state = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        while not state or not checkpoint_management.checkpoint_exists(
                state.model_checkpoint_path):
            if not wait_for_checkpoint or time.time() >= deadline:
                return False
            logging.info("Waiting for checkpoint to be available.")
            time.sleep(min(self._recovery_wait_secs, 1.0))
            state = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        saver.restore(sess, state.model_checkpoint_path)
        saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        return True

    # --- other workers --------------------------------------------------------------------
    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A session once the chief has made the model ready; DeadlineExceededError after
        `max_wait_secs`."""
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.time() + max_wait_secs
        sess = session_lib.Session(master, graph=self._graph, config=config)
        last_log = 0.0
        try:
            while True:
                local_ok, message = self._try_run_local_init_op(sess)
                if local_ok:
                    ready, message = self._model_ready(sess)
                    if ready:
                        return sess
                if time.time() - last_log >= _WAIT_LOG_SECS:
                    logging.info("Waiting for model to be ready. %s", message)
                    last_log = time.time()
                if time.time() + self._poll_secs > deadline:
                    raise errors.DeadlineExceededError(
                        None, None, f"Session was not ready after waiting {max_wait_secs} "
                        f"secs. {message}")
                time.sleep(self._poll_secs)
        except BaseException:
            _safe_close(sess)
            raise

    # --- readiness ------------------------------------------------------------------------
    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        if self._ready_for_local_init_op is not None:
            ready, message = self._ready(self._ready_for_local_init_op, sess,
                                         "Ready_for_local_init_op")
            if not ready:
                return False, message
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        return True, None

    def _model_ready(self, sess):
        return self._ready(self._ready_op, sess, "Ready")

    def _ready(self, op, sess, label):
        return ready_status(op, sess, label, self._graph)


def ready_status(op, sess, label, graph=None):
    """(ready, message): `op` lists uninitialised variable names (or is a bool tensor)."""
    if op is None:
        return True, None
    try:
        value = np.asarray(sess.run(op, options=config_lib.RunOptions(
            timeout_in_ms=int(READY_CHECK_SECONDS * 1000))))
    except errors.FailedPreconditionError as exc:
        return False, f"{label}: {exc.message}"
    except errors.DeadlineExceededError as exc:
        raise errors.UnavailableError(
            None, None, f"{label or 'The readiness check'} ({_name(op)}) got no answer in "
            f"time ({exc.message}); a task it runs on (device {_device(op) or 'of this task'}) "
            "may have lost the call") from None
    if value.dtype == np.bool_:
        return bool(value.all()), None if value.all() else f"{label}: not ready"
    if value.size == 0:
        return True, None
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in value.reshape(-1)]
    graph = graph if graph is not None else sess.graph
    return False, f"{label}: {describe_uninitialized(graph, names)}"


def describe_uninitialized(graph, names):
    """'Variables not initialized: w, b (on /job:ps/task:0); c (on /job:ps/task:1)'."""
    by_device = {}
    for name in names:
        try:
            device = graph.get_operation_by_name(name).device or "this task"
        except (KeyError, ValueError):
            device = "unknown device"
        by_device.setdefault(device, []).append(name)
    groups = [f"{', '.join(group)} (on {device})" for device, group in by_device.items()]
    return "Variables not initialized: " + "; ".join(groups)


def _name(op):
    return None if op is None else getattr(op, "name", op)


def _device(op):
    return getattr(op, "device", None)


def _safe_close(sess):
    try:
        sess.close()
    except Exception:  # noqa: BLE001 - closing after a failure must not hide the failure
        pass
