"""Estimator.train with `RunConfig(train_distribute=strategy)`, as TF 1.x does it: under
`strategy.scope()` the input_fn's dataset is read through `strategy.make_input_fn_iterator`
(so its batch size is per replica; an input_fn that declares `input_context` receives the
tf.distribute.InputContext), the model_fn is built once per replica with
`extended.call_for_each_replica` (its optimizer sums the replicas' gradients and applies them
once: train/optimizer.py), the reported loss is the SUM of the replicas' losses (TF's choice)
and the train op groups every replica's.

Between processes (MultiWorkerMirroredStrategy; TF_CONFIG with "chief" and "worker" tasks)
every worker's session is local and initialises (its initializer ends with the collective
broadcast of the chief's values, which all workers must run), and only the chief writes
checkpoints and summaries; every worker restores from model_dir when it holds a checkpoint.

Estimator.evaluate with `RunConfig(eval_distribute=strategy)` (an in-graph strategy:
MirroredStrategy, CentralStorageStrategy) reads the input the same way (each replica takes its
own batch) and builds the model_fn once per replica; each replica's metrics keep their own
totals, and at the end every metric variable of replica 0 is set to the SUM of all replicas'
(TF's metric variables are SUM-aggregated on read), so each metric is that of the whole eval
set. Unlike TF 1.x, whose last step fails when fewer batches than replicas are left, the
number of batches is known first (the dataset's cardinality, else one counting pass over the
input) and the last step runs only the replicas that have a batch: no example is dropped.
"""
import numpy as np

from tensorweave.data.dataset import Dataset
from tensorweave.distribute.values import local_results
from tensorweave.estimator import util
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.graph import GraphKeys
from tensorweave.metrics import metrics_impl
from tensorweave.ops import control_flow_ops, math_ops, state_ops
from tensorweave.train.session_run_hook import SessionRunHook


def _dataset_fn(estimator, input_fn, mode, datasets):
    """dataset_fn(input_context) for make_input_fn_iterator: the input_fn's Dataset (kept in
    `datasets`)."""
    def dataset_fn(input_context):
        kwargs = util.declared_kwargs(input_fn, mode=mode, params=estimator.params,
                                      config=estimator.config, input_context=input_context)
        result = input_fn(**kwargs)
        if not isinstance(result, Dataset):
            raise ValueError(f"Estimator with {mode}_distribute needs an input_fn that "
                             f"returns a tf.data.Dataset of (features, labels) batches (one "
                             f"batch per replica), got {type(result).__name__}")
        datasets.append(result)
        return result
    return dataset_fn


def _features_and_labels(element):
    if isinstance(element, (tuple, list)) and len(element) == 2:
        return element
    return element, None


def build_train_graph(estimator, strategy, input_fn):
    """(replica 0's EstimatorSpec, loss, train_op, input hooks); call inside strategy.scope()
    with the global step made."""
    config = estimator.config
    iterator = strategy.make_input_fn_iterator(
        _dataset_fn(estimator, input_fn, ModeKeys.TRAIN, []))
    specs = []

    def replica_fn(element):
        features, labels = _features_and_labels(element)
        spec = estimator._call_model_fn(features, labels, ModeKeys.TRAIN, config)
        if spec.train_op is None:
            raise ValueError("model_fn must return an EstimatorSpec with a train_op in TRAIN")
        specs.append(spec)
        return spec.loss, spec.train_op

    loss, train_op = strategy.extended.call_for_each_replica(
        replica_fn, args=(iterator.get_next(),))
    total = strategy.reduce("SUM", loss)
    return specs[0], total, strategy.group(train_op), [util.DatasetInitializerHook(iterator)]


def session_arguments(strategy, arguments):
    """MonitoredTrainingSession's arguments (master, is_chief, chief_only_hooks,
    save_summaries_steps, log_step_count_steps, config) as `strategy` needs them."""
    extended = strategy.extended
    if not extended.experimental_between_graph:
        return arguments
    changed = dict(arguments, master=extended.session_target,
                   is_chief=extended.experimental_should_init)
    if not extended.should_checkpoint:
        changed["chief_only_hooks"] = []
    if not extended.should_save_summary:
        changed["save_summaries_steps"] = changed["log_step_count_steps"] = None
    return changed


class ReplicatedEval:
    """The EVAL graph of every replica: `spec` is replica 0's EstimatorSpec; `metrics` maps
    each metric name (with "loss") to replica 0's (value, update_op); `updates[r]` is replica
    r's update op; `merge` sets replica 0's metric variables to the sum over the replicas."""

    def __init__(self, estimator, strategy, input_fn):
        datasets, self._variables, specs, metric_dicts = [], [], [], []
        iterator = strategy.make_input_fn_iterator(
            _dataset_fn(estimator, input_fn, ModeKeys.EVAL, datasets))

        def replica_fn(element):
            features, labels = _features_and_labels(element)
            first = len(graph_lib.get_collection(GraphKeys.METRIC_VARIABLES))
            spec = estimator._call_model_fn(features, labels, ModeKeys.EVAL, estimator.config)
            check_metric_names(spec)
            metrics = dict(spec.eval_metric_ops)
            metrics["loss"] = metrics_impl.mean(spec.loss)
            self._variables.append(graph_lib.get_collection(GraphKeys.METRIC_VARIABLES)[first:])
            specs.append(spec)
            metric_dicts.append(metrics)
            return control_flow_ops.group(*[update for _, update in metrics.values()])

        self.updates = list(local_results(strategy.extended.call_for_each_replica(
            replica_fn, args=(iterator.get_next(),))))
        self.spec, self.metrics = specs[0], metric_dicts[0]
        self.hooks = [util.DatasetInitializerHook(iterator)]
        self.merge = self._merge_op()
        # _first_updates[k - 1] runs replicas 0..k-1 (built now: the session finalizes the graph)
        self._first_updates = [control_flow_ops.group(*self.updates[:k])
                               for k in range(1, len(self.updates) + 1)]
        self._cardinality = datasets[0].cardinality()
        self._counted = datasets[0].reduce(np.int64(0), lambda total, _: total + 1)

    def _merge_op(self):
        first, *others = self._variables
        for position, variables in enumerate(others, 1):
            if [v.shape.as_list() for v in variables] != [v.shape.as_list() for v in first]:
                raise ValueError(f"eval_distribute: replica {position}'s model_fn made other "
                                 f"metric variables than replica 0's ({len(variables)} against "
                                 f"{len(first)}): every replica must make the same metrics")
        with graph_lib.name_scope("merge_replica_metrics"):
            return control_flow_ops.group(*[
                state_ops.assign(target, math_ops.add_n([target.value()] +
                                                        [v[i].value() for v in others]))
                for i, target in enumerate(first)])

    def _batch_count(self, session):
        count = session.run_step_fn(lambda step_context: step_context.session.run(
            self._cardinality))
        if count == -2:  # unknown (a filter, a generator): read the input once to count
            count = session.run_step_fn(lambda step_context: step_context.session.run(
                self._counted))
        return count

    def run(self, session, steps):
        """Runs the replicas' updates until the input ends (or `steps` global steps, which a
        hook counts); the last step runs only the replicas that still have a batch."""
        count = self._batch_count(session)
        if count < 0 and steps is None:
            raise ValueError("Estimator.evaluate: the eval input_fn's dataset is endless "
                             "(repeat() without a count): pass steps= or end the dataset")
        replicas = len(self.updates)
        done = 0
        while not session.should_stop():
            left = replicas if count < 0 else min(replicas, count - done)
            if left <= 0:
                break
            session.run(self._first_updates[left - 1])
            done += left


class MergeReplicaMetricsHook(SessionRunHook):
    """Runs the merge of the replicas' metric totals when the evaluation ends, before the
    FinalOpsHook (listed after it) reads the metric values."""

    def __init__(self, merge):
        self._merge = merge

    def end(self, session):
        session.run(self._merge)


def check_metric_names(spec):
    for reserved in ("loss", "global_step"):
        if reserved in spec.eval_metric_ops:
            raise ValueError(f"Metric with name '{reserved}' is not allowed, because "
                             f"Estimator already defines a default metric with the "
                             f"same name.")
