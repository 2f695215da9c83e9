"""What every replicator shares: `run(step_fn, input_fn)` builds `step_fn` once per local
replica under that replica's device and name scope, then joins the replicas' cross-replica
calls; `wrap_optimizer`, `reduce`, `context`, `init`, `shutdown` are filled by the modes.

A replicator subclass says which replicas this process builds (`_local_replicas`: (global
index, device) pairs), how their calls are joined (`_new_calls`), where variables live
(`_variable_device`) and how gradients are reduced and applied (`ReplicatedOptimizer`).
"""
import contextlib

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant
from tensorweave.ops import variable_scope as vs
from tensorweave.ops import variables as variables_lib
from tensorweave.replicator import context as context_lib
from tensorweave.replicator.inputs import InputSource, check_mode

REDUCE_OPS = ("mean", "sum")


class Replicator:
    """Base of MultiDeviceReplicator and MultiWorkerReplicator (not used directly)."""

    def __init__(self, input_mode="per_replica", shard_inputs=True):
        check_mode(input_mode)
        self.input_mode = input_mode
        self.shard_inputs = bool(shard_inputs)
        self.iterators = []  # input iterators of every run, initialised by init()
        self._prepared = None  # the ops init() runs (see _build_init_ops)
        self._runs = 0

    # --- what a mode says ---------------------------------------------------------------
    num_replicas = 1

    def _local_replicas(self):
        raise NotImplementedError

    def _new_calls(self):
        raise NotImplementedError

    def _variable_device(self):
        raise NotImplementedError

    def _replica_scope(self, index):
        return f"replica_{index}"

    def _input_shards(self):
        """(number of shards, this worker's index) for per-worker input."""
        return 1, 0

    # --- the API --------------------------------------------------------------------------
    @contextlib.contextmanager
    def context(self):
        """Variables (and the wrapped optimizers' slots) created inside are placed where this
        mode keeps them: shared by the replicas of the process, or on the parameter servers."""
        with graph_lib.device(self._variable_device()):
            yield self

    @property
    def replica_id(self):
        """The replica being built, an int32 scalar tensor (only inside step_fn)."""
        return context_lib.current("replica_id").replica_id

    def run(self, step_fn, input_fn=None):
        """Builds `step_fn(inputs)` (or `step_fn()` without input_fn) once for every replica
        of this process; returns the list of their results, in replica order."""
        if not callable(step_fn):
            raise TypeError(f"repl.run: step_fn must be callable, got {type(step_fn).__name__}")
        if context_lib.in_replica():
            raise RuntimeError("repl.run cannot be called inside a step_fn")
        shards, worker = self._input_shards()
        per_worker = self.input_mode == "per_worker"
        source = InputSource(input_fn, self.input_mode, self.shard_inputs,
                             shards if per_worker else self.num_replicas, worker)
        calls = self._new_calls()
        outputs = []
        run_scope = f"run_{self._runs}" if self._runs else "run"
        self._runs += 1
        try:
            for position, (index, device) in enumerate(self._local_replicas()):
                outputs.append(self._build_replica(step_fn, input_fn, source, calls, position,
                                                   index, device, run_scope))
        except BaseException:
            calls.discard()
            raise
        calls.rewrite()
        self.iterators.extend(source.iterators)
        self._prepared = self._build_init_ops()
        return outputs

    def _build_replica(self, step_fn, input_fn, source, calls, position, index, device,
                       run_scope):
        before = set(_global_variable_names())
        with graph_lib.device(device), graph_lib.name_scope(self._replica_scope(index)):
            with vs.variable_scope(vs.get_variable_scope(), reuse=vs.AUTO_REUSE):
                replica_id = constant(index, dtypes.int32, name="replica_id")
                ctx = context_lib.ReplicaContext(self, index, replica_id, calls)
                with context_lib.replica_scope(ctx):
                    inputs = source.for_replica(index)
                    output = step_fn() if input_fn is None else step_fn(inputs)
        new = sorted(set(_global_variable_names()) - before)
        if position > 0 and new:
            raise ValueError(f"repl.run ({run_scope}): replica {index}'s step_fn created "
                             f"the variables {new}, which replica 0 made as well; every "
                             "replica must share the model's variables: create them "
                             "under repl.context() or with tf.get_variable (reused by "
                             "the later replicas)")
        return output

    def reduce(self, values, op="mean"):
        """The per-replica `values` (run's result, or any list with one tensor per local
        replica) reduced over every replica: 'mean' or 'sum'."""
        if op not in REDUCE_OPS:
            raise ValueError(f"repl.reduce: op must be one of {REDUCE_OPS}, got {op!r}")
        values = list(values)
        local = len(self._local_replicas())
        if len(values) != local:
            raise ValueError(f"repl.reduce: expected {local} per-replica values (one per "
                             f"replica of this process), got {len(values)}")
        return self._reduce(values, op)

    def _reduce(self, values, op):
        raise NotImplementedError

    def _build_init_ops(self):
        """The ops `init` runs, built while the graph can still grow: after every `run`, and
        again by `init` unless a MonitoredSession has finalized the graph."""
        globals_ = variables_lib.global_variables()
        return {"uninitialised": variables_lib.report_uninitialized_variables(globals_),
                "globals": variables_lib.variables_initializer(globals_),
                "locals": variables_lib.local_variables_initializer(),
                "iterators": [it._initializer for it in self.iterators
                              if getattr(it, "_initializer", None) is not None]}

    def _init_ops(self):
        if not graph_lib.get_default_graph().finalized or self._prepared is None:
            self._prepared = self._build_init_ops()
        return self._prepared

    def init(self, session, initialise_globals=True):
        """Initialises the global variables if nothing else has (and `initialise_globals`),
        the local ones, and the input iterators."""
        ops = self._init_ops()
        if initialise_globals and len(session.run(ops["uninitialised"])):
            session.run(ops["globals"])
        session.run([ops["locals"]] + ops["iterators"])

    def shutdown(self, session):
        """Ends this replicator's use of `session` (nothing to release in-graph)."""


def _global_variable_names():
    return [v.op.name for v in variables_lib.global_variables()]
