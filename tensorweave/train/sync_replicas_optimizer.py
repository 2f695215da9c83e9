"""`tf.train.SyncReplicasOptimizer`: synchronous SGD across workers, with backup workers.

TF's mechanism (REFERENCE.md A.5), with every worker building the same graph:
  - each variable has a ConditionalAccumulator on the variable's device (shared name
    `<var>/grad_accum`); a worker applies its gradient tagged with its local step
    (`sync_rep_local_step`, a local variable on the worker), and the accumulator drops it if it
    is older than the accumulator's global step (a straggler's gradient is stale);
  - the chief averages the gradients of the step, applies them once with the wrapped
    optimizer (which increments global_step) and puts tokens holding the new global step in
    the token queue `sync_token_q`; a worker's train op ends by taking a token, which becomes
    its local step, so no worker runs ahead of the step it may compute.
With `total_num_replicas > replicas_to_aggregate` the extra workers are backups: the step
goes on with the first `replicas_to_aggregate` fresh gradients, and a straggler never holds it.

Where this departs from TF 1.x (REFERENCE.md D.9):
  - One token per gradient. After its gradients a worker puts its local step in the queue
    `sync_rep_submissions`; the chief's loop (`get_chief_queue_runner()`) reads it, takes the
    step once enough fresh gradients are in, and then releases exactly one token per fresh
    gradient of the step; a stale gradient gets its token at once (its worker catches up).
    TF instead puts `total_num_replicas` tokens per step, plus the initial ones, in one pool:
    tokens pile up while a worker is slow and a fast worker takes them, so TF's barrier does
    not hold (tensorflow/tensorflow#11753) and a 3-of-3 step does not wait for the third
    worker. Here a worker gives at most one gradient per step, and only backups let a step
    go on without a straggler. Submissions and released tokens are counted on the ps, so a
    submission whose reading was lost in a recovery still gets its token (`_release_owed`).
  - The number of dropped (stale) gradients is counted, kept in the variable
    `sync_rep_dropped_gradients` (`dropped_gradients`) and logged every `log_every_n_steps`
    steps. A gradient counts as dropped when the step's count accumulator (fed 1 per
    gradient, like the variables' accumulators) rejected it; a variable's accumulator decides
    on its own and can differ for a gradient that arrives while the chief is taking the step.
  - A worker whose input ends leaves (the hook's `end`): it lowers
    `sync_rep_active_replicas` and tells the chief, which from then on needs only as many
    gradients as there are active workers. When the chief ends, it closes the token queue:
    workers waiting for a token get OutOfRangeError, which ends their MonitoredSession
    normally. A restarted chief releases the workers whose gradients its predecessor had
    read (their count is kept on the parameter server, `sync_rep_awaiting`).
Sparse (IndexedSlices) gradients, an embedding's, go to a SparseConditionalAccumulator and
stay sparse: only the rows workers touched travel and are applied, and each row is averaged
over the gradients that had it (as TF does).
"""
import math
import threading

from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import array_ops, control_flow_ops, data_flow_ops, math_ops, state_ops
from tensorweave.ops.variables import Variable, report_uninitialized_variables, \
    global_variables
from tensorweave.platform import tf_logging as logging
from tensorweave.runtime import config as config_lib
from tensorweave.train import optimizer as optimizer_lib
from tensorweave.train import session_manager
from tensorweave.train.session_run_hook import SessionRunHook

_LEAVE = -1  # what a leaving worker puts in the submissions queue
_POLL_MS = 500  # the chief's wait for a submission, between checks of the stop request


class SyncReplicasOptimizer(optimizer_lib.WrappingOptimizer):
    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas", log_every_n_steps=100):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        if replicas_to_aggregate < 1 or total_num_replicas < 1:
            raise ValueError(f"replicas_to_aggregate ({replicas_to_aggregate}) and "
                             f"total_num_replicas ({total_num_replicas}) must be >= 1")
        if variable_averages is not None:
            raise NotImplementedError("SyncReplicasOptimizer(variable_averages=...) is not "
                                      "supported yet")
        super().__init__(opt, use_locking, name)
        logging.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                     replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._log_every_n_steps = log_every_n_steps
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list = []

    # --- delegated to the wrapped optimizer ------------------------------------------------
    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients, untouched (so per-replica clipping works)."""
        return self._opt.compute_gradients(*args, **kwargs)

    # --- the graph ------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The worker's train op: apply the gradients to the accumulators, wait for a token."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = graph_lib.get_default_graph()
        step_dtype = global_step.dtype
        local_anchor = control_flow_ops.no_op(name="sync_rep_local_anchor")
        with graph.colocate_with(local_anchor):  # on this worker, not on a ps
            self._local_step = Variable(array_ops.zeros([], dtype=step_dtype), trainable=False,
                                        collections=[GraphKeys.LOCAL_VARIABLES],
                                        name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step).op
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())
        applies, aggregated, var_list = [], [], []
        with graph.device(global_step.device):
            self._num_fresh = array_ops.placeholder_with_default(
                convert_to_tensor(self._replicas_to_aggregate, dtypes.int32), [],
                name="sync_rep_num_fresh")
        with graph.name_scope(None), graph.name_scope(name or self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                if grad is None:
                    aggregated.append(None)
                    continue
                with graph.device(var.device):
                    if isinstance(grad, IndexedSlices):
                        accumulator = data_flow_ops.SparseConditionalAccumulator(
                            grad.dtype, shape=var.shape, shared_name=var.name + "/grad_accum")
                        applies.append(accumulator.apply_indexed_slices_grad(
                            grad, local_step=self._local_step))
                        aggregated.append(accumulator.take_indexed_slices_grad(
                            self._num_fresh))
                    else:
                        grad = convert_to_tensor(grad)
                        accumulator = data_flow_ops.ConditionalAccumulator(
                            grad.dtype, shape=var.shape, shared_name=var.name + "/grad_accum")
                        applies.append(accumulator.apply_grad(grad,
                                                              local_step=self._local_step))
                        aggregated.append(accumulator.take_grad(self._num_fresh))
                self._accumulator_list.append((accumulator, var.device))
            if not applies:
                raise ValueError(f"No gradients for any of {[v.name for v in var_list]}")
            with graph.device(global_step.device):
                self._build_shared_state(step_dtype)
        with graph.device(global_step.device), graph.name_scope(None):
            update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)), global_step)
        train_op = self._build_worker_step(applies, global_step)
        self._build_chief_step(update_op, global_step)
        for accumulator, device in self._accumulator_list + [(self._count_accumulator,
                                                              global_step.device)]:
            with graph.device(device):
                chief_init_ops.append(accumulator.set_global_step(global_step,
                                                                  name="SetGlobalStep"))
        self.chief_init_op = control_flow_ops.group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def _build_shared_state(self, step_dtype):
        """The queues, the count accumulator and the chief's bookkeeping variables, on
        global_step's device. The bookkeeping variables are in no collection: checkpoints do
        not hold them and the chief's hook initialises them only once."""
        graph = graph_lib.get_default_graph()
        with graph.name_scope(None):
            self._sync_token_queue = data_flow_ops.FIFOQueue(
                -1, step_dtype, shapes=[[]], name="sync_token_q", shared_name="sync_token_q")
            self._submissions = data_flow_ops.FIFOQueue(
                -1, dtypes.int64, shapes=[[]], name="sync_rep_submissions",
                shared_name="sync_rep_submissions")
            self._count_accumulator = data_flow_ops.ConditionalAccumulator(
                dtypes.float32, shape=[], shared_name="sync_rep_count/grad_accum",
                name="sync_rep_count", reduction_type="SUM")
            self._active = Variable(convert_to_tensor(self._total_num_replicas, dtypes.int32),
                                    trainable=False, collections=[],
                                    name="sync_rep_active_replicas")
            self._dropped = Variable(array_ops.zeros([], dtypes.int64), trainable=False,
                                     collections=[], name="sync_rep_dropped_gradients")
            self._awaiting = Variable(array_ops.zeros([], dtypes.int64), trainable=False,
                                      collections=[], name="sync_rep_awaiting")
            # Tokens owed = submissions made - tokens released: both counted on the ps in the
            # step that does them, so that a submission read by a request whose answer was
            # lost (a recovery) is still owed its token. Workers count theirs in an
            # accumulator, a resource that needs no initialiser (a worker may submit before
            # the chief's hook initialised the variables below); its count is never taken,
            # and a gradient at local step 0 is never stale for it.
            self._submitted_count = data_flow_ops.ConditionalAccumulator(
                dtypes.float32, shape=[], shared_name="sync_rep_submitted/count",
                name="sync_rep_submitted", reduction_type="SUM")
            self._released = Variable(array_ops.zeros([], dtypes.int64), trainable=False,
                                      collections=[], name="sync_rep_released_tokens")
            self._bookkeeping = [(v, state_ops.is_variable_initialized(v))
                                 for v in (self._active, self._dropped, self._awaiting,
                                           self._released)]

    def _build_worker_step(self, applies, global_step):
        """Apply (done), count, submit, wait for a token, take it as the local step. The ops on
        the shared queues and accumulator go on global_step's device, where those live."""
        graph = graph_lib.get_default_graph()
        with graph.name_scope(None), graph.name_scope(self._name + "_worker"):
            local_step = self._local_step.value()
            # A new array, not a view of the local step that this step's assign overwrites.
            self._submitted_step = math_ops.add(math_ops.cast(local_step, dtypes.int64),
                                                convert_to_tensor(0, dtypes.int64))
            with graph.device(global_step.device):
                with graph.control_dependencies(applies):
                    # Before the count: a step aborted between the two leaves a gradient
                    # counted as submitted, which the owed-token check takes as pending.
                    noted = self._submitted_count.apply_grad(
                        convert_to_tensor(1.0, dtypes.float32), local_step=0)
                with graph.control_dependencies([noted]):
                    counted = self._count_accumulator.apply_grad(
                        convert_to_tensor(1.0, dtypes.float32), local_step=local_step)
                with graph.control_dependencies([counted]):
                    submitted = self._submissions.enqueue(self._submitted_step)
                with graph.control_dependencies([submitted]):
                    self._token = self._sync_token_queue.dequeue()
                leave = state_ops.assign_sub(self._active, 1)
                with graph.control_dependencies([leave]):
                    self._leave_op = self._submissions.enqueue(
                        convert_to_tensor(_LEAVE, dtypes.int64), name="leave")
            with graph.colocate_with(self._local_step.op):
                train_op = state_ops.assign(self._local_step, self._token, name="train_op")
        return train_op

    def _build_chief_step(self, update_op, global_step):
        graph = graph_lib.get_default_graph()
        with graph.device(global_step.device), graph.name_scope(None), \
                graph.name_scope(self._name + "_chief"):
            # The step: take num_fresh gradients everywhere, apply, one token per gradient.
            self._included = self._count_accumulator.take_grad(self._num_fresh)
            self._dropped_value = array_ops.placeholder_with_default(
                convert_to_tensor(0, dtypes.int64), [], name="dropped_so_far")
            self._step_release_count = array_ops.placeholder_with_default(
                self._num_fresh, [], name="step_release_count")
            with graph.control_dependencies([update_op, self._included]):
                tokens = array_ops.fill([self._step_release_count], global_step.read_value())
                released = self._count_released(
                    self._sync_token_queue.enqueue_many([tokens]), self._step_release_count)
            with graph.control_dependencies([released]):
                self._sync_op = control_flow_ops.group(
                    state_ops.assign(self._awaiting, convert_to_tensor(0, dtypes.int64)),
                    state_ops.assign(self._dropped, self._dropped_value), name="sync_op")
            # The loop's other ops: read a submission, note a fresh one, release tokens now.
            self._dequeue_submission = self._submissions.dequeue()
            self._note_fresh = state_ops.assign_add(
                self._awaiting, convert_to_tensor(1, dtypes.int64)).op
            self._release_count = array_ops.placeholder_with_default(
                convert_to_tensor(1, dtypes.int32), [], name="release_count")
            self._release = self._count_released(self._sync_token_queue.enqueue_many(
                [array_ops.fill([self._release_count], global_step.read_value())]),
                self._release_count, name="release")
            self._close_tokens = self._sync_token_queue.close(name="close_token_queue")
            self._read_active = self._active.read_value()
            self._read_step = global_step.read_value()
            self._read_awaiting = self._awaiting.read_value()
            self._read_dropped = self._dropped.read_value()
            self._read_accumulated = self._count_accumulator.num_accumulated()
            self._read_token_books = [self._submitted_count.num_accumulated(),
                                      self._released.read_value(), self._submissions.size()]
        self._chief_queue_runner = _ChiefSyncRunner(self)

    def _count_released(self, enqueue, count, name=None):
        """`enqueue` (of `count` tokens) then the released-token count, as one op."""
        with graph_lib.get_default_graph().control_dependencies([enqueue]):
            counted = state_ops.assign_add(self._released, math_ops.cast(count, dtypes.int64))
        return control_flow_ops.group(counted, name=name)

    # --- what the chief and the hook use ----------------------------------------------------
    @property
    def dropped_gradients(self):
        """The variable counting the gradient submissions dropped as stale (chief-updated)."""
        self._check_applied("dropped_gradients")
        return self._dropped

    @property
    def leave_op(self):
        """Run by a worker that stops for good (its input ended): nobody waits for it."""
        self._check_applied("leave_op")
        return self._leave_op

    def get_chief_queue_runner(self):
        self._check_applied("get_chief_queue_runner")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """Puts `num_tokens` extra tokens in the token queue. None are needed (the default,
        -1, puts none): a worker's first gradient needs no token, and the chief releases one
        token per gradient it reads. Extra tokens let as many gradients skip the barrier."""
        self._check_applied("get_init_tokens_op")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = 0
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) "
                             f"vs {tokens_needed} (needed)")
        graph = graph_lib.get_default_graph()
        if num_tokens > 0:
            with graph.device(self._global_step.device), graph.name_scope(None):
                tokens = array_ops.fill([num_tokens], self._global_step.read_value())
                return self._sync_token_queue.enqueue_many([tokens], name="init_tokens")
        return control_flow_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    def _check_applied(self, what):
        if not self._gradients_applied:
            raise ValueError(f"Should be called after apply_gradients() ({what}).")

    def _required(self, active):
        """Fresh gradients a step needs while `active` workers remain."""
        aggregate, total = self._replicas_to_aggregate, self._total_num_replicas
        if active >= total:
            return aggregate
        if aggregate <= total:
            return max(1, min(aggregate, active))
        return max(1, math.ceil(aggregate * active / total))


class _ChiefSyncRunner:
    """The chief's loop (a QueueRunner look-alike for start_queue_runners): read submissions
    until the step has enough fresh gradients, then take, apply, and release their tokens."""

    def __init__(self, opt):
        self._opt = opt
        self.name = "sync_replicas_chief"
        self.ending = threading.Event()  # set by the hook's end, before it closes the queue
        self._unread = 0  # fresh gradients of this step whose submissions were not read
        self._owed_seen = None  # (submitted, owed) at the last quiet poll that found some owed

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        self.ending.clear()  # a new session (a recovery, or another MonitoredSession)
        thread = threading.Thread(target=self._run, args=(sess, coord), daemon=daemon,
                                  name="SyncReplicas chief")
        if coord is not None:
            coord.register_thread(thread)
        if start:
            thread.start()
        return [thread]

    def _run(self, sess, coord):
        try:
            self._loop(sess, coord)
        except errors.OutOfRangeError:
            return  # the chief's end closed the queues
        except (errors.CancelledError, RuntimeError) as exc:
            if self.ending.is_set() or _stopping(coord) or "closed Session" in str(exc):
                return  # the session or the token queue is being closed: a normal end
            self._fail(sess, coord, exc)
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator
            self._fail(sess, coord, exc)

    def _fail(self, sess, coord, exc):
        """Without this loop no step ends: say why, and unless a task is gone (the session
        recovers then) close the token queue so that no worker waits for ever; the chief's
        session raises `exc` when it closes."""
        logging.error("SyncReplicas: the chief's loop failed: %s: %s", type(exc).__name__, exc)
        if not isinstance(exc, (errors.AbortedError, errors.UnavailableError)):
            try:
                sess.run(self._opt._close_tokens)
            except Exception:  # noqa: BLE001 - the error being reported matters more
                pass
        _report(coord, exc)

    def _loop(self, sess, coord):
        opt = self._opt
        poll = config_lib.RunOptions(timeout_in_ms=_POLL_MS)
        step = int(sess.run(opt._read_step))
        dropped = int(sess.run(opt._read_dropped))
        self._unread, self._owed_seen = 0, None
        # Each worker gives one gradient per step, unless a step needs more than there are.
        hold = opt._replicas_to_aggregate <= opt._total_num_replicas
        fresh = int(sess.run(opt._read_awaiting))  # read by this chief's predecessor
        required = opt._required(int(sess.run(opt._read_active)))
        included_later = {}  # step -> its included gradients whose submission is unread
        released_early = {}  # the same, whose tokens went out with the step
        dropped_at_last_log = dropped
        while not self.ending.is_set() and (coord is None or not coord.should_stop()):
            if fresh < required:
                try:
                    entry = int(sess.run(opt._dequeue_submission, options=poll))
                except (errors.DeadlineExceededError, errors.CancelledError):
                    # The poll's deadline (a remote step may report it as the cancellation
                    # of its blocked dequeue); a stop request ends the loop above.
                    fresh = self._count_unread(sess, step, fresh, required, hold)
                    continue
                self._owed_seen = None
                if entry == _LEAVE:
                    required = opt._required(int(sess.run(opt._read_active)))
                elif entry >= step:
                    fresh += 1
                    if hold:  # its worker waits for the end of the step
                        sess.run(opt._note_fresh)
                    else:  # fewer workers than gradients a step needs: it computes again
                        sess.run(opt._release)
                elif released_early.get(entry, 0) > 0:
                    released_early[entry] -= 1  # its token went out with its step
                else:
                    if included_later.get(entry, 0) > 0:
                        included_later[entry] -= 1
                    else:
                        dropped += 1
                    sess.run(opt._release)  # its worker goes on at the current step
                continue
            _, included = sess.run([opt._sync_op, opt._included],
                                   {opt._num_fresh: fresh, opt._dropped_value: dropped,
                                    opt._step_release_count: fresh if hold else 0})
            included_later[step] = int(round(float(included))) - fresh
            released_early[step] = self._unread
            for old in (step - 100,):  # long gone: nothing more will come
                included_later.pop(old, None)
                released_early.pop(old, None)
            step, fresh, self._unread = step + 1, 0, 0
            if opt._log_every_n_steps and step % opt._log_every_n_steps == 0:
                logging.info("SyncReplicas: global step %d, %d stale gradients dropped "
                             "(%d in the last %d steps)", step, dropped,
                             dropped - dropped_at_last_log, opt._log_every_n_steps)
                dropped_at_last_log = dropped

    def _count_unread(self, sess, step, fresh, required, hold):
        """No submission came for a poll: if the count accumulator holds enough fresh
        gradients although fewer submissions were read, the submissions were lost (a
        recovery abandoned steps on a parameter server that ran them later, e.g. one paused
        and resumed): the accumulator, which the gradients reach first, is the truth. Their
        workers wait for tokens, which the step releases (one per gradient). -> fresh.
        Else lost stale submissions may hold workers: see `_release_owed`."""
        opt = self._opt
        accumulated, *books = sess.run([opt._read_accumulated] + opt._read_token_books)
        accumulated = int(accumulated)
        if accumulated < required or accumulated <= fresh:
            self._release_owed(sess, step, [int(n) for n in books],
                               max(accumulated, fresh) if hold else 0)
            return fresh
        logging.warning("SyncReplicas: global step %d has %d fresh gradients in its "
                        "accumulators but only %d submissions were read (lost in a "
                        "recovery?): taking the step and releasing a token for each.",
                        step, accumulated, fresh)
        self._unread += accumulated - fresh
        return accumulated

    def _release_owed(self, sess, step, books, pending):
        """Releases the tokens of submissions that no reader acted on. Each submission is
        owed one token; `pending` of them get theirs when the step is taken (fresh gradients
        of this step), those still queued when read; the rest were read by a request whose
        answer was lost, or read by a loop that ended before releasing (a recovery), and
        their workers would wait for ever. Acted on only when two quiet polls in a row
        find the same owed tokens and no new submission: a worker's step counts its
        submission a moment before it is queued."""
        submitted, released, queued = books
        owed = submitted - released - queued - pending
        if owed <= 0:
            self._owed_seen = None
            return
        if self._owed_seen != (submitted, owed):
            self._owed_seen = (submitted, owed)
            return
        logging.warning("SyncReplicas: at global step %d, %d workers wait for tokens whose "
                        "submissions were lost (read by a request abandoned in a recovery?): "
                        "releasing %d tokens.", step, owed, owed)
        sess.run(self._opt._release, {self._opt._release_count: owed})
        self._owed_seen = None


def _stopping(coord):
    return coord is not None and coord.should_stop()


def _report(coord, exc):
    if coord is None:
        raise exc
    coord.request_stop(exc)


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Initialises the local step (and on the chief the accumulators and first tokens),
    starts the chief's loop; at the end a worker leaves and the chief closes the tokens."""

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._runner = None
            self._init_tokens_op = None
        self._ready_for_local_init_op = opt.ready_for_local_init_op

    def after_create_session(self, session, coord):
        ready, message = session_manager.ready_status(
            self._ready_for_local_init_op, session,
            "Model is not ready for SyncReplicasOptimizer local init")
        if not ready:
            raise RuntimeError(f"Init operations did not make model ready for "
                               f"SyncReplicasOptimizer local_init. Init op: "
                               f"{self._local_init_op.name}, error: {message}")
        session.run(self._local_init_op)
        if self._is_chief:
            opt = self._sync_optimizer
            for variable, initialized in opt._bookkeeping:  # once per parameter server
                if not session.run(initialized):
                    session.run(variable.initializer)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._runner is not None:
            self._runner.create_threads(session, coord=coord, daemon=True, start=True)

    def end(self, session):
        opt = self._sync_optimizer
        if self._runner is not None:
            self._runner.ending.set()
        try:
            session.run(opt._close_tokens if self._is_chief else opt._leave_op)
        except errors.OpError as exc:  # the ps may be gone already: nothing left to tell
            logging.info("SyncReplicas: could not %s at the end (%s)",
                         "close the token queue" if self._is_chief else "leave", exc.message)
