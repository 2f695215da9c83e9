"""`tf.contrib.learn`'s estimators (TF 1.0-1.3; contrib/learn answers with them through
platform/extensions): the core tf.estimator ones behind the older
interface that takes NumPy arrays (`x=`, `y=`, `batch_size=`) as well as input_fns:
`fit`, `evaluate`, `predict` (class ids for classifiers; `predict_proba` for probabilities),
and custom models through `Estimator(model_fn)` whose model_fn returns ModelFnOps or
(predictions, loss, train_op).

With `x=`, an array is fed as one tensor (features are that tensor, as in TF; the canned
estimators read it through `real_valued_column("")`), in batches of `batch_size` (32 by
default for fit, shuffled and repeated; 128 and one pass for evaluate and predict).
"""
import collections
import inspect

import numpy as np

from tensorweave.feature_column.contrib_columns import as_features
from tensorweave.data.dataset import Dataset
from tensorweave.estimator import canned, util
from tensorweave.estimator.estimator import Estimator as _CoreEstimator
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.model_fn import EstimatorSpec
from tensorweave.estimator.run_config import RunConfig  # noqa: F401
from tensorweave.train.session_run_hook import SessionRunHook

_FIT_BATCH, _EVAL_BATCH = 32, 128


def _array_input_fn(x, y, batch_size, shuffle, epochs):
    """An input_fn over arrays (or dicts of arrays): (features, labels) batches."""
    if x is None:
        raise ValueError("Either x or input_fn must be provided.")
    x = {k: np.asarray(v) for k, v in x.items()} if isinstance(x, dict) else np.asarray(x)
    count = len(next(iter(x.values()))) if isinstance(x, dict) else len(x)
    if y is not None:
        y = {k: np.asarray(v) for k, v in y.items()} if isinstance(y, dict) else np.asarray(y)
        y_count = len(next(iter(y.values()))) if isinstance(y, dict) else len(y)
        if y_count != count:
            raise ValueError(f"x has {count} examples but y has {y_count}")
    batch = min(count, batch_size)

    def input_fn():
        data = Dataset.from_tensor_slices((x, y) if y is not None else x)
        if shuffle:
            data = data.shuffle(max(count, 1))
        data = data.repeat(epochs).batch(batch)
        element = data.make_one_shot_iterator().get_next()
        return element if y is not None else (element, None)
    return input_fn


def _input_fn(x, y, input_fn, batch_size, shuffle, epochs, default_batch):
    if input_fn is not None and (x is not None or y is not None):
        raise ValueError("Either x (and y) or input_fn must be given, not both.")
    if input_fn is not None:
        return input_fn
    return _array_input_fn(x, y, batch_size or default_batch, shuffle, epochs)


def _hooks(monitors):
    hooks = list(monitors or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"monitors must be SessionRunHooks here, got {type(hook).__name__}"
                            " (contrib's BaseMonitor classes are not supported)")
    return hooks


class ModelFnOps(collections.namedtuple("ModelFnOps", [
        "predictions", "loss", "train_op", "eval_metric_ops", "output_alternatives",
        "training_chief_hooks", "training_hooks", "scaffold", "mode"])):
    """What a contrib model_fn returns (EstimatorSpec's predecessor)."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                output_alternatives=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None):
        return super().__new__(cls, predictions, loss, train_op, eval_metric_ops,
                               output_alternatives, training_chief_hooks, training_hooks,
                               scaffold, mode)

    def estimator_spec(self):
        predictions = self.predictions
        if predictions is not None and not isinstance(predictions, dict):
            predictions = {"predictions": predictions}
        return EstimatorSpec(self.mode, predictions=predictions, loss=self.loss,
                             train_op=self.train_op, eval_metric_ops=self.eval_metric_ops,
                             training_chief_hooks=self.training_chief_hooks,
                             training_hooks=self.training_hooks, scaffold=self.scaffold)


def _contrib_model_fn(model_fn, params, config):
    """A core model_fn around a contrib one (which may take (features, targets[, mode]
    [, params][, config]) and return ModelFnOps or (predictions, loss, train_op))."""
    def core_model_fn(features, labels, mode):
        result = model_fn(features, labels, **util.declared_kwargs(
            model_fn, mode=mode, params=params, config=config))
        if isinstance(result, ModelFnOps):
            return result.estimator_spec()
        if isinstance(result, EstimatorSpec):
            return result
        predictions, loss, train_op = result
        if predictions is not None and not isinstance(predictions, dict):
            predictions = {"predictions": predictions}
        return EstimatorSpec(mode, predictions=predictions, loss=loss,
                             train_op=train_op if mode == ModeKeys.TRAIN else None)
    return core_model_fn


class _LearnInterface:
    """fit / evaluate / predict over arrays or input_fns, on a core Estimator."""

    def fit(self, x=None, y=None, input_fn=None, steps=None, batch_size=None, monitors=None,
            max_steps=None):
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        fn = _input_fn(x, y, input_fn, batch_size, True, None, _FIT_BATCH)
        self.train(fn, hooks=_hooks(monitors), steps=steps, max_steps=max_steps)
        return self

    partial_fit = fit

    def evaluate(self, x=None, y=None, input_fn=None, feed_fn=None, batch_size=None,
                 steps=None, metrics=None, name=None, checkpoint_path=None, hooks=None):
        if feed_fn is not None:
            raise ValueError("evaluate: feed_fn is not supported; use an input_fn")
        if metrics:
            raise ValueError("evaluate: metrics= is not supported; add eval_metric_ops to the "
                             "model_fn (or tf.estimator.add_metrics)")
        fn = _input_fn(x, y, input_fn, batch_size, False, 1, _EVAL_BATCH)
        return _CoreEstimator.evaluate(self, fn, steps=steps, hooks=hooks,
                                       checkpoint_path=checkpoint_path, name=name)

    def _predictions(self, x, input_fn, batch_size, keys, as_iterable):
        fn = _input_fn(x, None, input_fn, batch_size, False, 1, _EVAL_BATCH)
        stream = _CoreEstimator.predict(self, fn, predict_keys=keys)
        if as_iterable:
            return stream
        rows = list(stream)
        if rows and isinstance(rows[0], dict):
            return {k: np.stack([r[k] for r in rows]) for k in rows[0]}
        return np.array(rows)


class Estimator(_LearnInterface, _CoreEstimator):
    """A contrib estimator of a model_fn (see _contrib_model_fn)."""

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None,
                 feature_engineering_fn=None):
        if model_fn is None:
            raise ValueError("Estimator needs a model_fn")
        if feature_engineering_fn is not None:
            inner = model_fn

            def model_fn(features, labels, **kwargs):  # noqa: F811 - the engineered one
                features, labels = feature_engineering_fn(features, labels)
                return inner(features, labels, **kwargs)
            model_fn.__signature__ = inspect.signature(inner)
        super().__init__(_contrib_model_fn(model_fn, params, config), model_dir=model_dir,
                         config=config)

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None, as_iterable=True):
        result = self._predictions(x, input_fn, batch_size, outputs, as_iterable)
        if as_iterable:
            return (row["predictions"] if isinstance(row, dict) and list(row) == ["predictions"]
                    else row for row in result)
        # A model_fn that returned one predictions tensor gets one array back.
        return result["predictions"] if isinstance(result, dict) and \
            list(result) == ["predictions"] else result


def _canned(core_class, kind):
    """A contrib estimator class over core canned class `core_class`."""
    class Canned(_LearnInterface, core_class):
        def __init__(self, *args, **kwargs):
            # Arguments that only tuned TF's implementation; the ones that change the model
            # are refused rather than ignored.
            kwargs.pop("input_layer_min_slice_size", None)
            kwargs.pop("fix_global_step_increment_bug", None)
            for unsupported in ("gradient_clip_norm", "embedding_lr_multipliers"):
                if kwargs.pop(unsupported, None) is not None:
                    raise ValueError(f"tf.contrib.learn.{core_class.__name__}: {unsupported} "
                                     "is not supported; clip or scale in a custom model_fn")
            if kwargs.pop("enable_centered_bias", False):
                raise ValueError(f"tf.contrib.learn.{core_class.__name__}: "
                                 "enable_centered_bias=True is not supported")
            if "weight_column_name" in kwargs:
                kwargs["weight_column"] = kwargs.pop("weight_column_name")
            if "label_keys" in kwargs:
                kwargs["label_vocabulary"] = kwargs.pop("label_keys")
            if "label_dimension" not in kwargs and "target_dimension" in kwargs:
                kwargs["label_dimension"] = kwargs.pop("target_dimension")
            super().__init__(*args, **kwargs)
            inner = self._model_fn

            def model_fn(features, labels, mode):  # a bare array becomes {ARRAY_KEY: it}
                return inner(as_features(features), labels, mode)
            self._model_fn = model_fn

        def predict(self, x=None, input_fn=None, batch_size=None, outputs=None,
                    as_iterable=True):
            """Class ids (classifiers) or values (regressors), one per example."""
            key = "class_ids" if kind == "classifier" else "predictions"
            return self._flat(x, input_fn, batch_size, key, as_iterable)

        def _flat(self, x, input_fn, batch_size, key, as_iterable):
            rows = (row[key] for row in self._predictions(x, input_fn, batch_size, [key],
                                                          True))
            rows = (r.item() if np.size(r) == 1 else r for r in rows)
            return rows if as_iterable else np.array(list(rows))

        if kind == "classifier":
            def predict_classes(self, x=None, input_fn=None, batch_size=None,
                                as_iterable=True):
                return self._flat(x, input_fn, batch_size, "class_ids", as_iterable)

            def predict_proba(self, x=None, input_fn=None, batch_size=None,
                              as_iterable=True):
                rows = (row["probabilities"] for row in self._predictions(
                    x, input_fn, batch_size, ["probabilities"], True))
                return rows if as_iterable else np.array(list(rows))

        else:
            def predict_scores(self, x=None, input_fn=None, batch_size=None,
                               as_iterable=True):
                return self._flat(x, input_fn, batch_size, "predictions", as_iterable)

    Canned.__name__ = Canned.__qualname__ = core_class.__name__
    Canned.__doc__ = f"tf.contrib.learn.{core_class.__name__}: the core estimator of that " \
                     "name with fit/evaluate/predict over arrays."
    return Canned


DNNClassifier = _canned(canned.DNNClassifier, "classifier")
DNNRegressor = _canned(canned.DNNRegressor, "regressor")
LinearClassifier = _canned(canned.LinearClassifier, "classifier")
LinearRegressor = _canned(canned.LinearRegressor, "regressor")
DNNLinearCombinedClassifier = _canned(canned.DNNLinearCombinedClassifier, "classifier")
DNNLinearCombinedRegressor = _canned(canned.DNNLinearCombinedRegressor, "regressor")


class SKCompat:
    """A scikit-learn-shaped wrapper: fit(x, y), score(x, y), predict(x) -> dict of arrays."""

    def __init__(self, estimator):
        self._estimator = estimator

    def fit(self, x, y, batch_size=128, steps=None, max_steps=None, monitors=None):
        self._estimator.fit(x=x, y=y, batch_size=batch_size, steps=steps, max_steps=max_steps,
                            monitors=monitors)
        return self

    def score(self, x, y, batch_size=128, steps=None, metrics=None, name=None):
        return self._estimator.evaluate(x=x, y=y, batch_size=batch_size, steps=steps,
                                        metrics=metrics, name=name)

    def predict(self, x, batch_size=128, outputs=None):
        return self._estimator._predictions(x, None, batch_size, outputs, False)


def _provide():
    from tensorweave.estimator import contrib_experiment
    from tensorweave.feature_column.contrib_columns import infer_real_valued_columns_from_input
    from tensorweave.platform import extensions
    extensions.provide(
        "contrib.learn", Estimator=Estimator, ModelFnOps=ModelFnOps, RunConfig=RunConfig,
        SKCompat=SKCompat, DNNClassifier=DNNClassifier, DNNRegressor=DNNRegressor,
        LinearClassifier=LinearClassifier, LinearRegressor=LinearRegressor,
        DNNLinearCombinedClassifier=DNNLinearCombinedClassifier,
        DNNLinearCombinedRegressor=DNNLinearCombinedRegressor,
        Experiment=contrib_experiment.Experiment,
        infer_real_valued_columns_from_input=infer_real_valued_columns_from_input)
    extensions.provide("contrib.learn.learn_runner", run=contrib_experiment.run)


_provide()
