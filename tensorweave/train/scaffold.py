"""`tf.train.Scaffold` and the session creators of a MonitoredSession.

A Scaffold gathers what makes a model ready: the init op, the ready ops, the local init op,
the saver, and the summary op that SummarySaverHook runs (tf.summary.merge_all() by default).
`finalize()` fills what the user left out from the graph collections (INIT_OP, READY_OP, ...)
or with the defaults, builds the saver, and finalizes the graph: no op can be
added once training starts (hooks add theirs in `begin`).

`ChiefSessionCreator` makes the chief's session (restore or initialise, SessionManager.
prepare_session); `WorkerSessionCreator` the others' (wait until the model is ready).
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import control_flow_ops, summary_ops, variables
from tensorweave.train import saver as saver_lib
from tensorweave.train.session_manager import SessionManager


class Scaffold:
    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            source = copy_from_scaffold
            init_op = init_op if init_op is not None else source.init_op
            init_feed_dict = init_feed_dict or source._init_feed_dict
            init_fn = init_fn or source._user_init_fn
            ready_op = ready_op if ready_op is not None else source.ready_op
            ready_for_local_init_op = (ready_for_local_init_op if ready_for_local_init_op
                                       is not None else source.ready_for_local_init_op)
            local_init_op = local_init_op if local_init_op is not None else source.local_init_op
            local_init_feed_dict = local_init_feed_dict or source._local_init_feed_dict
            summary_op = summary_op if summary_op is not None else source.summary_op
            saver = saver if saver is not None else source.saver
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver
        self._finalized = False

    def finalize(self):
        """Fills in the defaults, builds the saver, finalizes the graph. Runs once."""
        if self._finalized:
            return self
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op", GraphKeys.INIT_OP,
                lambda: control_flow_ops.group(variables.global_variables_initializer()))
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP,
                lambda: variables.report_uninitialized_variables())
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP,
                                                       summary_ops.merge_all)
        if self._saver is None:
            self._saver = _saver_or_default()
        self._saver.build()
        graph_lib.get_default_graph().finalize()
        self._finalized = True
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one op in `collection_key`, or a new default op (added to it)."""
        found = graph_lib.get_collection(collection_key)
        if len(found) > 1:
            raise RuntimeError(f"More than one item in the collection {collection_key}. Please "
                               f"indicate which one to use by passing it to the tf.Scaffold "
                               f"constructor as:  tf.Scaffold({arg_name}=item to use)")
        if found:
            return found[0]
        op = default_constructor()
        if op is not None:
            graph_lib.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        return control_flow_ops.group(variables.local_variables_initializer())


def _saver_or_default():
    savers = graph_lib.get_collection(GraphKeys.SAVERS)
    if len(savers) > 1:
        raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                           "indicate which one to use by passing it to the constructor.")
    if savers:
        return savers[0]
    saver = saver_lib.Saver(sharded=True, allow_empty=True)
    graph_lib.add_to_collection(GraphKeys.SAVERS, saver)
    return saver


class SessionCreator:
    def create_session(self):
        raise NotImplementedError


class ChiefSessionCreator(SessionCreator):
    """The chief's session: the model restored from the latest checkpoint or initialised."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        scaffold = self._scaffold.finalize()
        manager = SessionManager(
            local_init_op=scaffold.local_init_op,
            local_init_feed_dict=scaffold.local_init_feed_dict,
            ready_op=scaffold.ready_op,
            ready_for_local_init_op=scaffold.ready_for_local_init_op,
            graph=graph_lib.get_default_graph())
        return manager.prepare_session(
            self._master, saver=scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=scaffold.init_op,
            init_feed_dict=scaffold.init_feed_dict, init_fn=scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """A non-chief's session, once the chief has made the model ready."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        scaffold = self._scaffold.finalize()
        manager = SessionManager(
            local_init_op=scaffold.local_init_op,
            local_init_feed_dict=scaffold.local_init_feed_dict,
            ready_op=scaffold.ready_op,
            ready_for_local_init_op=scaffold.ready_for_local_init_op,
            graph=graph_lib.get_default_graph())
        return manager.wait_for_session(self._master, config=self._config,
                                        max_wait_secs=self._max_wait_secs)
