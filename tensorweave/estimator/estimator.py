"""`tf.estimator.Estimator`: a model_fn trained, evaluated and run for predictions, each call in
a graph of its own, with the model's state in checkpoints under `model_dir`.

  train     builds the TRAIN graph (global step, input_fn, model_fn) and runs train_op in a
            MonitoredTrainingSession: the chief restores the latest checkpoint of model_dir or
            initialises, saves checkpoints and summaries there; in a cluster (RunConfig from
            TF_CONFIG) variables go to the ps tasks through replica_device_setter and the
            session targets this task's server. `steps` counts from the restored global step,
            `max_steps` is absolute (training is skipped when a checkpoint already reached it).
  evaluate  restores a checkpoint (the latest by default), runs the metrics' update ops until
            the input ends or `steps` batches, and returns the metric values with `loss` and
            `global_step`; they are also written as summaries to model_dir/eval[_name].
  predict   restores a checkpoint and yields the predictions, one example at a time unless
            yield_single_examples=False.
"""
import contextlib
import copy
import os
import tempfile

from tensorweave.estimator import distributed_training, util
from tensorweave.estimator import warm_starting
from tensorweave.estimator.export import saved_model_export
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.model_fn import EstimatorSpec
from tensorweave.estimator.run_config import RunConfig, TaskType
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import random_seed
from tensorweave.framework.graph import GraphKeys
from tensorweave.metrics import metrics_impl
from tensorweave.ops import control_flow_ops, summary_ops
from tensorweave.platform import tf_logging as logging
from tensorweave.runtime import config as config_lib
from tensorweave.train import basic_session_run_hooks as hooks_lib
from tensorweave.train import checkpoint_management
from tensorweave.train import device_setter
from tensorweave.train import monitored_session
from tensorweave.train import saver as saver_lib
from tensorweave.train import training_util
from tensorweave.train.scaffold import ChiefSessionCreator
from tensorweave.train.session_run_hook import SessionRunHook


def _check_hooks(hooks):
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook!r}")
    return hooks


def _check_listeners(listeners):
    listeners = list(listeners or [])
    for listener in listeners:
        if not isinstance(listener, hooks_lib.CheckpointSaverListener):
            raise TypeError(f"saving_listeners must be a list of CheckpointSaverListener, "
                            f"given: {listener!r}")
    return listeners


def _global_step_of_checkpoint(checkpoint_dir):
    path = checkpoint_management.latest_checkpoint(checkpoint_dir)
    if not path:
        return 0
    try:
        return int(checkpoint_management.load_variable(path, GraphKeys.GLOBAL_STEP))
    except Exception:  # noqa: BLE001 - a checkpoint without a global step starts at 0
        return 0


class Estimator:
    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if config is None:
            config = RunConfig()
            logging.info("Using default config.")
        elif not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of tf.estimator.RunConfig, but "
                             f"provided {config!r}")
        if model_dir is not None and config.model_dir is not None and \
                os.path.normpath(str(model_dir)) != os.path.normpath(config.model_dir):
            raise ValueError(f"model_dir are set both in constructor and RunConfig, but with "
                             f"different values. In constructor: '{model_dir}', in RunConfig: "
                             f"'{config.model_dir}'")
        model_dir = model_dir or config.model_dir
        if model_dir is None:
            model_dir = tempfile.mkdtemp()
            logging.warning("Using temporary folder as model directory: %s", model_dir)
        self._config = config.replace(model_dir=str(model_dir))
        self._model_dir = self._config.model_dir
        logging.info("Using config: %s", self._config)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        util.verify_model_fn_args(model_fn, params)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = warm_starting.settings_from(warm_start_from)

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: copy.deepcopy(self._config))
    params = property(lambda self: copy.deepcopy(self._params))
    model_fn = property(lambda self: lambda features, labels, mode, config:
                        self._call_model_fn(features, labels, mode, config))

    # --- checkpoint access --------------------------------------------------------------------
    def latest_checkpoint(self):
        return checkpoint_management.latest_checkpoint(self._model_dir)

    def get_variable_names(self):
        self._require_checkpoint()
        return [name for name, _ in checkpoint_management.list_variables(self._model_dir)]

    def get_variable_value(self, name):
        self._require_checkpoint()
        return checkpoint_management.load_variable(self._model_dir, name)

    def _require_checkpoint(self):
        if not self.latest_checkpoint():
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")

    # --- train ----------------------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and max_steps <= _global_step_of_checkpoint(self._model_dir):
            logging.info("Skipping training since max_steps has already saved.")
            return self
        hooks = _check_hooks(hooks)
        if steps is not None or max_steps is not None:
            hooks.append(hooks_lib.StopAtStepHook(steps, max_steps))
        loss = self._train_model(input_fn, hooks, _check_listeners(saving_listeners))
        logging.info("Loss for final step: %s.", loss)
        return self

    def _train_model(self, input_fn, hooks, saving_listeners):
        config = self._config
        strategy = config.train_distribute
        with graph_lib.Graph().as_default() as graph, \
                graph.device(self._device_fn() if strategy is None else None), \
                strategy.scope() if strategy is not None else contextlib.nullcontext():
            random_seed.set_random_seed(config.tf_random_seed)
            global_step = training_util.create_global_step(graph)
            if strategy is None:
                features, labels, input_hooks = util.parse_input_fn_result(
                    util.call_input_fn(input_fn, ModeKeys.TRAIN, self.params, self.config))
                spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
                loss, train_op = spec.loss, spec.train_op
            else:
                spec, loss, train_op, input_hooks = distributed_training.build_train_graph(
                    self, strategy, input_fn)
            summary_ops.scalar("loss", loss)
            graph_lib.add_to_collection(GraphKeys.LOSSES, loss)
            scaffold = warm_starting.scaffold_with_warm_start(spec.scaffold,
                                                              self._warm_start_settings)
            if not graph_lib.get_collection(GraphKeys.SAVERS) and scaffold.saver is None:
                graph_lib.add_to_collection(GraphKeys.SAVERS, saver_lib.Saver(
                    sharded=True, max_to_keep=config.keep_checkpoint_max,
                    keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
                    defer_build=True, save_relative_paths=True))
            worker_hooks = hooks + input_hooks + [hooks_lib.NanTensorHook(loss)]
            if config.log_step_count_steps:
                worker_hooks.append(hooks_lib.LoggingTensorHook(
                    {"loss": loss, "step": global_step},
                    every_n_iter=config.log_step_count_steps))
            worker_hooks.extend(spec.training_hooks)
            chief_hooks = self._checkpoint_hooks(scaffold, worker_hooks + list(
                spec.training_chief_hooks), saving_listeners)
            session_arguments = dict(
                master=config.master, is_chief=config.is_chief,
                chief_only_hooks=chief_hooks + list(spec.training_chief_hooks),
                save_summaries_steps=config.save_summary_steps,
                log_step_count_steps=config.log_step_count_steps,
                config=self._session_config(strategy))
            if strategy is not None:
                session_arguments = distributed_training.session_arguments(
                    strategy, session_arguments)
            with monitored_session.MonitoredTrainingSession(
                    checkpoint_dir=self._model_dir, scaffold=scaffold, hooks=worker_hooks,
                    save_checkpoint_secs=0, max_wait_secs=config.session_creation_timeout_secs,
                    **session_arguments) as session:
                loss_value = None
                while not session.should_stop():
                    _, loss_value = session.run([train_op, loss])
            return loss_value

    def _checkpoint_hooks(self, scaffold, other_hooks, saving_listeners):
        """The chief's CheckpointSaverHook (unless the model_fn brought one), carrying the
        saving listeners."""
        config = self._config
        hooks = []
        if config.save_checkpoints_secs or config.save_checkpoints_steps:
            if not any(isinstance(h, hooks_lib.CheckpointSaverHook) for h in other_hooks):
                hooks.append(hooks_lib.CheckpointSaverHook(
                    self._model_dir, save_secs=config.save_checkpoints_secs,
                    save_steps=config.save_checkpoints_steps, scaffold=scaffold))
        savers = [h for h in other_hooks + hooks if isinstance(h, hooks_lib.CheckpointSaverHook)]
        if saving_listeners:
            if not savers:
                raise ValueError("There should be a CheckpointSaverHook to use saving_listeners: "
                                 "set save_checkpoints_steps or save_checkpoints_secs in the "
                                 "RunConfig.")
            savers[0]._listeners.extend(saving_listeners)
        return hooks

    # --- evaluate -------------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        hooks = _check_hooks(hooks)
        if steps is not None:
            if steps <= 0:
                raise ValueError(f"Must specify steps > 0, given: {steps}")
            hooks.append(util.StopAfterNEvalsHook(steps))
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            logging.info("Could not find trained model in model_dir: %s, running "
                         "initialization to evaluate.", self._model_dir)
        strategy = self._config.eval_distribute
        if strategy is not None and strategy.extended.experimental_between_graph:
            logging.warning("eval_distribute=%s: a strategy between processes evaluates as "
                            "one replica per worker here (the metrics are those of this "
                            "worker's input)", type(strategy).__name__)
            strategy = None
        with graph_lib.Graph().as_default() as graph, \
                strategy.scope() if strategy is not None else contextlib.nullcontext():
            random_seed.set_random_seed(self._config.tf_random_seed)
            global_step = training_util.create_global_step(graph)
            if strategy is None:
                features, labels, input_hooks = util.parse_input_fn_result(
                    util.call_input_fn(input_fn, ModeKeys.EVAL, self.params, self.config))
                spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
                distributed_training.check_metric_names(spec)
                metrics = dict(spec.eval_metric_ops)
                metrics["loss"] = metrics_impl.mean(spec.loss)
                update_op = control_flow_ops.group(*[update for _, update in metrics.values()])
            else:
                replicated = distributed_training.ReplicatedEval(self, strategy, input_fn)
                spec, metrics, input_hooks = replicated.spec, replicated.metrics, \
                    replicated.hooks
                input_hooks = input_hooks + [
                    distributed_training.MergeReplicaMetricsHook(replicated.merge)]
            final = {key: value for key, (value, _) in metrics.items()}
            final["global_step"] = global_step
            final_hook = hooks_lib.FinalOpsHook(final)
            all_hooks = input_hooks + hooks + list(spec.evaluation_hooks) + [final_hook]
            creator = ChiefSessionCreator(
                scaffold=spec.scaffold, checkpoint_filename_with_path=checkpoint_path,
                master=self._config.evaluation_master,
                config=self._config.session_config if strategy is None
                else self._session_config(strategy))
            logging.info("Starting evaluation of %s", checkpoint_path)
            with monitored_session.MonitoredSession(session_creator=creator,
                                                    hooks=all_hooks) as session:
                if strategy is not None:
                    replicated.run(session, steps)
                else:
                    while not session.should_stop():
                        session.run(update_op)
            results = final_hook.final_ops_values
        logging.info("Saving dict for global step %s: %s", results["global_step"],
                     ", ".join(f"{k} = {v}" for k, v in sorted(results.items())))
        eval_dir = os.path.join(self._model_dir, "eval" if not name else "eval_" + name)
        util.write_dict_to_summary(eval_dir, results, results["global_step"])
        return results

    def eval_dir(self, name=None):
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    # --- predict --------------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        hooks = _check_hooks(hooks)
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            logging.info("Could not find trained model in model_dir: %s, running "
                         "initialization to predict.", self._model_dir)
        with graph_lib.Graph().as_default() as graph:
            random_seed.set_random_seed(self._config.tf_random_seed)
            training_util.create_global_step(graph)
            features, _, input_hooks = util.parse_input_fn_result(
                util.call_input_fn(input_fn, ModeKeys.PREDICT, self.params, self.config))
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            predictions = self._pick_predictions(spec.predictions, predict_keys)
            creator = ChiefSessionCreator(scaffold=spec.scaffold,
                                          checkpoint_filename_with_path=checkpoint_path,
                                          master=self._config.master,
                                          config=self._config.session_config)
            with monitored_session.MonitoredSession(
                    session_creator=creator,
                    hooks=input_hooks + hooks + list(spec.prediction_hooks)) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(values, dict):
                        yield from values
                    else:
                        for index in range(util.batch_length(values)):
                            yield {key: value[index] for key, value in values.items()}

    @staticmethod
    def _pick_predictions(predictions, predict_keys):
        if predict_keys is None:
            return predictions
        if not isinstance(predictions, dict):
            raise ValueError("predict_keys argument is not valid in case of non-dict "
                             "predictions.")
        picked = {key: value for key, value in predictions.items() if key in predict_keys}
        if not picked:
            raise ValueError(f"Expected to run at least one output from {sorted(predictions)}, "
                             f"provided {predict_keys}.")
        return picked

    # --- export -------------------------------------------------------------------------------
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None,
                           as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Writes a checkpoint as a SavedModel under export_dir_base/<timestamp>; returns
        that path (bytes). See estimator/export/saved_model_export.py."""
        return saved_model_export.export_saved_model(
            self, export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
            checkpoint_path, experimental_mode)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None,
                          as_text=False, checkpoint_path=None, strip_default_attrs=False):
        """TF 1.x's older name of export_saved_model (default attrs are always stripped)."""
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn,
                                       assets_extra, as_text, checkpoint_path)

    # --- the model_fn and the cluster -----------------------------------------------------------
    def _call_model_fn(self, features, labels, mode, config):
        args = util.fn_args(self._model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = config
        logging.info("Calling model_fn.")
        spec = self._model_fn(features=features, **kwargs)
        logging.info("Done calling model_fn.")
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f"model_fn should return an EstimatorSpec, got {spec!r}")
        return spec

    def _device_fn(self):
        """Where the training graph's ops go: the config's device_fn, or variables on the ps
        tasks and the rest on this task when the cluster has parameter servers."""
        config = self._config
        if config.device_fn is not None:
            return config.device_fn
        if config.num_ps_replicas > 0:
            return device_setter.replica_device_setter(
                ps_tasks=config.num_ps_replicas,
                worker_device=f"/job:{config.task_type}/task:{config.task_id}",
                merge_devices=True, cluster=config.cluster_spec)
        return None

    def _session_config(self, strategy=None):
        """The session config for training: the user's, or in a cluster one whose device
        filters let this task see only the ps tasks and itself (so a worker does not wait for
        the other workers, as in TF); a train_distribute strategy adds what it needs (e.g.
        MirroredStrategy's devices)."""
        config = self._config
        if strategy is not None:  # the strategy knows its devices and tasks
            return strategy.update_config_proto(copy.deepcopy(config.session_config) or
                                                config_lib.ConfigProto())
        if config.session_config is not None or not config.master or \
                config.task_type not in (TaskType.CHIEF, TaskType.WORKER, TaskType.MASTER):
            return config.session_config
        filters = [f"/job:{config.task_type}/task:{config.task_id}"]
        if TaskType.PS in config.cluster_spec.jobs:
            filters.insert(0, "/job:ps")
        return config_lib.ConfigProto(device_filters=filters)
