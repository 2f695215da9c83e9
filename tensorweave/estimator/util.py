"""What the Estimator shares between train, evaluate and predict: calling input_fn and
model_fn with the arguments they declare, turning an input_fn's result into (features,
labels), the hooks that start a dataset and count evaluation batches, and writing the eval
results as TensorBoard scalars."""
import functools
import inspect
import os

import numpy as np

from tensorweave.data.dataset import Dataset
from tensorweave.framework import event_file
from tensorweave.framework.protos import summary_pb2
from tensorweave.platform import tf_logging as logging
from tensorweave.train.session_run_hook import SessionRunHook

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")


def fn_args(fn):
    """The names of the arguments `fn` takes (bound ones of a functools.partial left out)."""
    if isinstance(fn, functools.partial):
        bound = set(fn.keywords or {})
        return tuple(a for a in fn_args(fn.func)[len(fn.args):] if a not in bound)
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else getattr(fn, "__call__", fn)
    return tuple(name for name, param in inspect.signature(target).parameters.items()
                 if param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD))


def verify_model_fn_args(model_fn, params):
    args = set(fn_args(model_fn))
    if "features" not in args:
        raise ValueError(f"model_fn ({model_fn}) must include a 'features' argument")
    if params is not None and "params" not in args:
        raise ValueError(f"model_fn ({model_fn}) does not include a 'params' argument, but "
                         f"params ({params}) are passed to the Estimator")
    unexpected = sorted(args - set(_MODEL_FN_ARGS) - {"self"})
    if unexpected:
        raise ValueError(f"model_fn ({model_fn}) has arguments the Estimator cannot pass: "
                         f"{unexpected}; it may take {list(_MODEL_FN_ARGS)}")


def call_input_fn(input_fn, mode, params, config):
    """input_fn() with whichever of mode, params and config it declares."""
    if not callable(input_fn):
        raise TypeError(f"input_fn must be callable, got {input_fn!r}")
    return input_fn(**declared_kwargs(input_fn, mode=mode, params=params, config=config))


def declared_kwargs(fn, **candidates):
    """The candidates `fn` declares as arguments (input_fn and model_fn take any of mode,
    params and config)."""
    args = fn_args(fn)
    return {name: value for name, value in candidates.items() if name in args}


def parse_input_fn_result(result):
    """(features, labels or None, hooks): a Dataset is read through an initializable iterator
    (started by a hook, so a recovered session starts it again); a tuple is (features,
    labels); anything else is the features."""
    hooks = []
    if isinstance(result, Dataset):
        iterator = result.make_initializable_iterator()
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError(f"input_fn must return features or (features, labels), got a "
                             f"{type(result).__name__} of {len(result)} items")
        return result[0], result[1], hooks
    return result, None, hooks


class DatasetInitializerHook(SessionRunHook):
    def __init__(self, iterator):
        self._iterator = iterator

    def after_create_session(self, session, coord):
        session.run(self._iterator.initializer)


class StopAfterNEvalsHook(SessionRunHook):
    """Stops an evaluation after `num_evals` batches."""

    def __init__(self, num_evals):
        self._num_evals = num_evals
        self.evals_completed = 0

    def after_run(self, run_context, run_values):
        self.evals_completed += 1
        if self.evals_completed % max(1, self._num_evals // 10) == 0:
            logging.info("Evaluation [%d/%d]", self.evals_completed, self._num_evals)
        if self.evals_completed >= self._num_evals:
            run_context.request_stop()


def write_dict_to_summary(output_dir, dictionary, global_step):
    """The scalar entries of `dictionary` as TensorBoard scalars at `global_step` (a serialized
    Summary proto, as a tf.summary op returns, is written as it is)."""
    os.makedirs(output_dir, exist_ok=True)
    writer = event_file.writer_for(output_dir)
    summary = summary_pb2.Summary()
    for key, value in sorted(dictionary.items()):
        if key == "global_step" or value is None:
            continue
        array = np.asarray(value)
        if isinstance(value, bytes):
            try:
                summary.MergeFromString(value)
            except Exception:  # noqa: BLE001 - not a Summary: say which and go on
                logging.warning("Skipping eval summary for %s: bytes that are not a Summary",
                                key)
            continue
        if array.size == 1 and array.dtype.kind in "fiub":
            summary.value.add(tag=key, simple_value=float(array.reshape(())))
        else:
            logging.warning("Skipping eval summary for %s: only scalars are written, got %s",
                            key, array.shape)
    writer.add_summary(summary, int(global_step))
    writer.flush()


def batch_length(predictions):
    """The batch size shared by every prediction (each needs a first dimension)."""
    lengths = set()
    for key, value in predictions.items():
        array = np.asarray(value)
        if array.ndim == 0:
            raise ValueError(f"Prediction {key!r} is a scalar: with yield_single_examples=True "
                             "every prediction needs a batch dimension")
        lengths.add(array.shape[0])
    if len(lengths) != 1:
        raise ValueError(f"Batch length of predictions should be the same, got "
                         f"{ {k: np.asarray(v).shape for k, v in predictions.items()} }")
    return lengths.pop()
