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
"""
from tensorweave.data.dataset import Dataset
from tensorweave.estimator import util
from tensorweave.estimator.mode_keys import ModeKeys


def build_train_graph(estimator, strategy, input_fn):
    """(replica 0's EstimatorSpec, loss, train_op, input hooks); call inside strategy.scope()
    with the global step made."""
    config = estimator.config

    def dataset_fn(input_context):
        kwargs = util.declared_kwargs(input_fn, mode=ModeKeys.TRAIN, params=estimator.params,
                                      config=config, input_context=input_context)
        result = input_fn(**kwargs)
        if not isinstance(result, Dataset):
            raise ValueError(f"Estimator.train with train_distribute needs an input_fn that "
                             f"returns a tf.data.Dataset of (features, labels) batches (one "
                             f"batch per replica), got {type(result).__name__}")
        return result

    iterator = strategy.make_input_fn_iterator(dataset_fn)
    specs = []

    def replica_fn(element):
        features, labels = element if isinstance(element, (tuple, list)) and \
            len(element) == 2 else (element, None)
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
