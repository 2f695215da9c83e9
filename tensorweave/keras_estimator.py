"""`tf.keras.estimator.model_to_estimator`: a compiled Keras model as a tf.estimator.Estimator.

The Estimator's model_fn rebuilds the model from its config on the input_fn's features (a
tensor, a list, or a dict keyed by the model's input names), compiles it as the Keras model
was compiled with the labels as targets, and starts from the Keras model's current weights
(set when a run initialises its variables rather than restoring a checkpoint of model_dir).
TRAIN runs the optimizer's updates and the layers' updates (batch normalisation) and advances
the global step; EVAL reports the loss and the model's metrics (means over the evaluation);
PREDICT yields the outputs keyed by output names.

It joins tensorweave.keras and tensorweave.estimator, which may not import each other, so it
lives at the public layer and tensorweave/__init__.py attaches it as tf.keras.estimator."""
from tensorweave import estimator as estimator_lib
from tensorweave import keras
from tensorweave.framework import graph as graph_lib
from tensorweave.metrics import mean as metric_mean
from tensorweave.ops import control_flow_ops, state_ops
from tensorweave.train.scaffold import Scaffold
from tensorweave.train.training_util import get_or_create_global_step


def _by_name(values, names, what):
    if isinstance(values, dict):
        missing = [name for name in names if name not in values]
        if missing:
            raise ValueError(f"model_to_estimator: the {what} dict has no entries for "
                             f"{missing} (the model's {what} names are {names}; got "
                             f"{sorted(values)})")
        return [values[name] for name in names]
    return list(values) if isinstance(values, (list, tuple)) else [values]


def _fresh_optimizer(optimizer):
    if isinstance(optimizer, keras.optimizers.TFOptimizer):
        return optimizer.optimizer  # a tf.train optimizer makes its slots per variable
    return type(optimizer).from_config(optimizer.get_config())


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None,
                       model_dir=None, config=None, checkpoint_format=None):
    if (keras_model is None) == (keras_model_path is None):
        raise ValueError("model_to_estimator: give exactly one of keras_model and "
                         "keras_model_path")
    if keras_model_path is not None:
        keras_model = keras.models.load_model(keras_model_path, custom_objects)
    if not getattr(keras_model, "_compiled", False):
        raise ValueError(f"model_to_estimator: model {keras_model.name} is not compiled; call "
                         "compile(optimizer, loss, metrics) first")
    if not keras_model._is_graph_network:
        raise NotImplementedError("model_to_estimator: a subclassed model has no config to "
                                  "rebuild; use a Sequential or functional model")
    architecture = keras_model.to_json()
    weights = keras_model.get_weights()
    optimizer, loss = keras_model.optimizer, keras_model.loss
    metrics, loss_weights = keras_model._metric_specs, keras_model._loss_weights

    def model_fn(features, labels, mode):
        model = keras.models.model_from_json(architecture, custom_objects)
        inputs = _by_name(features, model.input_names, "features")
        training = mode == estimator_lib.ModeKeys.TRAIN
        outputs = model(inputs if len(inputs) > 1 else inputs[0], training=training)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        variables = model.weights
        scaffold = Scaffold(init_fn=lambda _, session: [
            variable.load(value, session) for variable, value in zip(variables, weights)])
        if mode == estimator_lib.ModeKeys.PREDICT:
            return estimator_lib.EstimatorSpec(
                mode, predictions=dict(zip(model.output_names, outputs)), scaffold=scaffold)
        rebuilt = keras.Model(inputs=model.inputs, outputs=outputs)
        rebuilt.compile(_fresh_optimizer(optimizer), loss, metrics=metrics,
                        loss_weights=loss_weights,
                        target_tensors=_by_name(labels, model.output_names, "labels"))
        rebuilt._ensure_compiled()
        total = rebuilt.total_loss
        if mode == estimator_lib.ModeKeys.EVAL:
            names = rebuilt.metrics_names[len(rebuilt.metrics_names) -
                                          len(rebuilt._metric_tensors):]
            return estimator_lib.EstimatorSpec(
                mode, loss=total, scaffold=scaffold,
                eval_metric_ops={name: metric_mean(value) for name, value in
                                 zip(names, rebuilt._metric_tensors)})
        step = get_or_create_global_step()
        updates = rebuilt.optimizer.get_updates(total, rebuilt.trainable_weights)
        with graph_lib.control_dependencies(updates + list(rebuilt.updates)):
            train_op = control_flow_ops.group(state_ops.assign_add(step, 1))
        return estimator_lib.EstimatorSpec(mode, loss=total, train_op=train_op,
                                           scaffold=scaffold)

    return estimator_lib.Estimator(model_fn, model_dir=model_dir, config=config)
