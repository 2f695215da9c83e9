"""`tf.keras.Model`: a network with `compile` (optimizer, loss, metrics), and `fit`, `evaluate`,
`predict` and their `*_on_batch` forms, run in graph mode through the Keras session.

compile builds, for each output, a target placeholder, a sample-weight placeholder, the loss
(mean over the batch of the per-example loss times its weight; over the unmasked entries when
the output has a mask) and the metrics (means over the unmasked entries); the total loss
adds the loss weights' combination and the model's regularisation losses. The first training
call builds the train op (the optimizer's updates plus the layers' updates, e.g. batch
normalisation's moving averages) and runs with the learning phase fed True."""
import numpy as np

from tensorweave.keras import backend, losses as losses_lib, metrics as metrics_lib
from tensorweave.keras import optimizers
from tensorweave.keras.engine import distributed
from tensorweave.keras.engine import masking
from tensorweave.keras.engine import node as node_lib
from tensorweave.keras.engine import saving, serialization
from tensorweave.keras.engine import training_data as data_lib
from tensorweave.keras.engine import training_loops
from tensorweave.keras.engine.network import Network
from tensorweave.ops import array_ops, control_flow_ops, math_ops

_ACCURACY_NAMES = ("accuracy", "acc")
_CROSSENTROPY_NAMES = ("crossentropy", "ce")


def weighted_mean_loss(per_example_fn, target, output, weight):
    """The batch mean of the per-example loss (averaged over trailing dimensions) times the
    sample weights."""
    per_example = per_example_fn(target, output)
    while per_example.shape.ndims is not None and per_example.shape.ndims > 1:
        per_example = math_ops.reduce_mean(per_example, -1)
    return math_ops.reduce_mean(per_example * math_ops.cast(weight, per_example.dtype))


def _masked_loss(per_entry, mask, sample_weight):
    """The loss of an output with a mask: the weighted sum over the unmasked entries over
    their count (TF's Keras)."""
    weights = math_ops.cast(mask, per_entry.dtype)
    while per_entry.shape.ndims is not None and per_entry.shape.ndims > weights.shape.ndims:
        per_entry = math_ops.reduce_mean(per_entry, -1)
    sample_weight = array_ops.reshape(math_ops.cast(sample_weight, per_entry.dtype),
                                      [-1] + [1] * (weights.shape.ndims - 1))
    return math_ops.reduce_sum(per_entry * weights * sample_weight) / \
        math_ops.reduce_sum(weights)


def _masked_mean(values, mask):
    if mask is None:
        return math_ops.reduce_mean(values)
    weights = math_ops.cast(mask, values.dtype)
    return math_ops.reduce_sum(values * weights) / math_ops.reduce_sum(weights)


class Model(Network):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.optimizer = None
        self._strategy = None  # the tf.distribute strategy whose scope compile ran in
        self._compiled = False
        self._graph_compiled = False
        self.stop_training = False
        self.history = None

    # --- compile ------------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                sample_weight_mode=None, weighted_metrics=None, target_tensors=None,
                **kwargs):
        if kwargs.pop("run_eagerly", None):
            raise ValueError("compile(run_eagerly=True): tensorweave runs graphs only")
        kwargs.pop("experimental_run_tf_function", None)  # TF 1.15's switch; one path here
        if kwargs.pop("distribute", None) is not None:
            raise ValueError("compile(distribute=...) is not supported")
        if kwargs:
            raise TypeError(f"compile: unexpected keyword arguments {sorted(kwargs)}")
        if sample_weight_mode is not None:
            raise ValueError("compile(sample_weight_mode=...): only per-sample weights are "
                             "supported")
        self.optimizer = optimizers.get(optimizer)
        self._strategy = distributed.strategy_of_compile()
        for loss_fn in (loss.values() if isinstance(loss, dict) else
                        loss if isinstance(loss, (list, tuple)) else [loss]):
            if loss_fn is not None:
                losses_lib.get(loss_fn)  # an unknown name fails here, not in fit
        self.loss = loss
        if weighted_metrics and isinstance(metrics, dict):
            raise ValueError("compile: give metrics and weighted_metrics as lists when both "
                             "are used")
        self._metric_specs = metrics if isinstance(metrics, dict) else \
            list(metrics or []) + list(weighted_metrics or [])
        self._loss_weights = loss_weights
        self._target_tensors = target_tensors
        self._graph_compiled = False
        self._train_function = self._test_function = None
        if self.built and self.outputs:
            self._compile_graph()
        self._compiled = True

    def _per_output(self, spec, what):
        names = self.output_names
        if isinstance(spec, dict):
            unknown = set(spec) - set(names)
            if unknown:
                raise ValueError(f"Unknown entries in {what} dictionary: {sorted(unknown)}. "
                                 f"Only expected the following keys: {names}")
            return [spec.get(name) for name in names]
        if isinstance(spec, (list, tuple)):
            if len(spec) != len(names):
                raise ValueError(f"When passing a list as {what}, it should have one entry per "
                                 f"model output. The model has {len(names)} outputs, but you "
                                 f"passed {what}={spec}")
            return list(spec)
        return [spec] * len(names)

    @property
    def output_names(self):
        names = []
        for tensor in self.outputs:
            history = node_lib.keras_history(tensor)
            names.append(history[0].name if history else tensor.op.name)
        return names

    @property
    def input_names(self):
        names = []
        for tensor in self.inputs:
            history = node_lib.keras_history(tensor)
            names.append(history[0].name if history else tensor.op.name)
        return names

    def _compile_graph(self):
        graph = self.outputs[0].graph
        loss_fns = self._per_output(self.loss, "loss")
        weights = self._per_output(self._loss_weights, "loss_weights") \
            if self._loss_weights is not None else [1.0] * len(self.outputs)
        given_targets = self._per_output(self._target_tensors, "target_tensors") \
            if self._target_tensors is not None else [None] * len(self.outputs)
        metric_specs = self._metric_specs
        if isinstance(metric_specs, dict) or (
                metric_specs and all(isinstance(m, (list, tuple)) for m in metric_specs)):
            per_output_metrics = [m if isinstance(m, (list, tuple)) else [] if m is None
                                  else [m] for m in self._per_output(metric_specs, "metrics")]
        else:
            per_output_metrics = [metric_specs] * len(self.outputs)
        several = len(self.outputs) > 1
        self.targets, self.sample_weights, self._output_losses = [], [], []
        self._loss_terms = []  # (output index, per-example loss, loss weight)
        loss_names, metric_names, metric_tensors = [], [], []
        with graph.as_default(), graph.name_scope(None):
            total = None
            for index, (output, name) in enumerate(zip(self.outputs, self.output_names)):
                loss_fn = loss_fns[index]
                if loss_fn is None:
                    continue
                loss_fn = losses_lib.get(loss_fn)
                per_example_fn = loss_fn.call if isinstance(loss_fn, losses_lib.Loss) \
                    else loss_fn
                target = given_targets[index]
                if target is None:
                    rank = output.shape.ndims
                    target = array_ops.placeholder(output.dtype, None if rank is None
                                                   else [None] * rank, name=f"{name}_target")
                # [1.] broadcasts over the batch when no weights are fed (as in TF 1.x Keras)
                weight = array_ops.placeholder_with_default(
                    np.ones(1, np.float32), [None], name=f"{name}_sample_weights")
                self.targets.append(target)
                self.sample_weights.append(weight)
                mask = masking.get_mask(output)
                with graph.name_scope(f"loss/{name}_loss"):
                    if mask is not None:
                        output_loss = _masked_loss(per_example_fn(target, output), mask,
                                                   weight)
                    else:
                        output_loss = weighted_mean_loss(per_example_fn, target, output, weight)
                self._output_losses.append(output_loss)
                self._loss_terms.append((index, per_example_fn, float(
                    weights[index] if weights[index] is not None else 1)))
                term = output_loss * float(weights[index] if weights[index] is not None else 1)
                total = term if total is None else total + term
                if several:
                    loss_names.append(f"{name}_loss")
                for spec in per_output_metrics[index] or []:
                    metric_name, fn = self._resolve_metric(spec, loss_fn, output)
                    with graph.name_scope(f"metrics/{metric_name}"):
                        value = _masked_mean(math_ops.cast(fn(target, output), "float32"),
                                             mask)
                    metric_tensors.append(value)
                    metric_names.append(f"{name}_{metric_name}" if several else metric_name)
            regularization = self.losses
            if total is None and not regularization:
                raise ValueError("The model cannot be compiled because it has no loss to "
                                 "optimize: give compile a loss, or add losses to the model "
                                 "with add_loss.")
            if regularization:
                extra = math_ops.add_n([math_ops.cast(r, "float32") for r in regularization])
                total = extra if total is None else total + math_ops.cast(extra, total.dtype)
        self.metrics_names = ["loss"] + loss_names + metric_names  # Keras's order
        self.total_loss = total
        self._metric_tensors = metric_tensors
        self._graph_compiled = True
        self._train_function = self._test_function = None

    @staticmethod
    def _resolve_metric(spec, loss_fn, output):
        """(name, per-example function) of a metric; 'accuracy' picks binary, sparse or
        categorical accuracy from the loss and the output's last dimension, as Keras does."""
        if isinstance(spec, str) and spec in _ACCURACY_NAMES + _CROSSENTROPY_NAMES:
            loss_name = getattr(loss_fn, "__name__", type(loss_fn).__name__).lower()
            if isinstance(loss_fn, losses_lib.LossFunctionWrapper):
                loss_name = loss_fn.fn.__name__
            binary = output.shape.as_list()[-1] == 1 or "binary" in loss_name
            sparse = "sparse" in loss_name
            if spec in _ACCURACY_NAMES:
                fn = (metrics_lib.binary_accuracy if binary else
                      metrics_lib.sparse_categorical_accuracy if sparse else
                      metrics_lib.categorical_accuracy)
                return "acc", fn
            fn = (losses_lib.binary_crossentropy if binary else
                  losses_lib.sparse_categorical_crossentropy if sparse else
                  losses_lib.categorical_crossentropy)
            return "ce", fn
        if isinstance(spec, metrics_lib.Metric):
            return spec.name, spec.per_example
        fn = metrics_lib.get(spec)
        return getattr(fn, "__name__", type(fn).__name__), fn

    # --- functions ----------------------------------------------------------------------------
    def _ensure_compiled(self):
        if not self._compiled:
            raise RuntimeError("You must compile your model before training/testing. Use "
                               "`model.compile(optimizer, loss)`.")
        if not self._graph_compiled:
            self._compile_graph()

    def _make_train_function(self):
        if self._train_function is None:
            graph = self.outputs[0].graph
            with graph.as_default(), graph.name_scope(None):
                with graph.name_scope("training"):
                    if self._strategy is None:
                        updates = self.optimizer.get_updates(self.total_loss,
                                                             self.trainable_weights)
                    else:
                        updates = distributed.optimizer_updates(self, self._strategy,
                                                                weighted_mean_loss)
                updates = list(updates) + list(self.updates)
                with graph.control_dependencies(
                        None if self._strategy is None else [self.total_loss]):
                    # with a strategy the reported loss reads the weights before the update
                    self._train_op = control_flow_ops.group(*updates)
            self._train_function = ([self.total_loss] + self._extra_losses() +
                                    self._metric_tensors)
        return self._train_function

    def _extra_losses(self):
        return list(self._output_losses) if len(self._output_losses) > 1 else []

    def _make_test_function(self):
        if self._test_function is None:
            self._test_function = ([self.total_loss] + self._extra_losses() +
                                   self._metric_tensors)
        return self._test_function

    def _feeds(self, xs, ys=None, weights=None, training=False):
        feeds = {}
        for tensor, array in zip(self.inputs, xs or []):
            if array is not None:
                feeds[tensor] = np.asarray(array, tensor.dtype.as_numpy_dtype)
        if ys is not None:
            weights = weights or [None] * len(ys)
            for target, weight, array, sw in zip(self.targets, self.sample_weights, ys,
                                                 weights):
                if array is not None:
                    feeds[target] = np.asarray(array, target.dtype.as_numpy_dtype)
                if sw is not None:
                    feeds[weight] = sw
        phase = backend.learning_phase_placeholder(self.outputs[0].graph)
        if phase is not None:
            feeds[phase] = bool(training)
        return feeds

    def _run(self, fetches, feeds, train=False):
        session = backend.get_session(self.outputs)
        if train:
            values, _ = session.run([fetches, self._train_op], feeds)
        else:
            values = session.run(fetches, feeds)
        return [float(v) for v in values]

    # --- data ---------------------------------------------------------------------------------
    def _build_from_data(self, xs):
        """Builds a deferred (Sequential without an input shape, or subclassed) model on
        placeholders shaped like the data."""
        shapes = [(None,) + a.shape[1:] for a in xs]
        dtypes = [backend.floatx() if a.dtype.kind == "f" else a.dtype.name for a in xs]
        self._build_on_placeholders(shapes, dtypes, len(xs) == 1)

    def _standardize(self, x, y=None, sample_weight=None, class_weight=None):
        input_names = self.input_names if self.inputs else [f"input_{i + 1}" for i in range(
            len(x) if isinstance(x, (list, tuple)) and not np.isscalar(x[0]) else 1)]
        xs = data_lib.match(x, input_names, "input", self.name)
        if not self.built or not self.inputs:
            self._build_from_data(xs)
        if self._compiled and not self._graph_compiled:
            self._compile_graph()
        data_lib.check_shapes(xs, self.inputs, self.input_names, "input")
        if y is None:
            return xs, None, None
        ys = data_lib.match(y, self.output_names, "target", self.name)
        ys = data_lib.fit_targets(ys, self.outputs)
        count = data_lib.check_lengths([xs, ys])
        weights = data_lib.sample_weights(ys, sample_weight, class_weight, count)
        return xs, ys, weights

    # --- public training API ------------------------------------------------------------------
    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       reset_metrics=True):
        xs, ys, weights = self._standardize(x, y, sample_weight, class_weight)
        self._ensure_compiled()
        values = self._run(self._make_train_function(), self._feeds(xs, ys, weights, True),
                           train=True)
        return values[0] if len(values) == 1 else values

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True):
        xs, ys, weights = self._standardize(x, y, sample_weight)
        self._ensure_compiled()
        values = self._run(self._make_test_function(), self._feeds(xs, ys, weights))
        return values[0] if len(values) == 1 else values

    def predict_on_batch(self, x):
        xs, _, _ = self._standardize(x)
        outputs = backend.get_session(self.outputs).run(self.outputs, self._feeds(xs))
        return outputs[0] if len(outputs) == 1 else outputs

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_freq=1, **kwargs):
        if kwargs:
            raise TypeError(f"fit: unexpected keyword arguments {sorted(kwargs)}")
        return training_loops.fit(self, x, y, batch_size, epochs, verbose, callbacks,
                                  validation_split, validation_data, shuffle, class_weight,
                                  sample_weight, initial_epoch, steps_per_epoch,
                                  validation_steps, validation_freq)

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None,
                 steps=None, callbacks=None):
        return training_loops.evaluate(self, x, y, batch_size, verbose, sample_weight, steps)

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None):
        return training_loops.predict(self, x, batch_size, verbose, steps)

    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1,
                      callbacks=None, validation_data=None, validation_steps=None,
                      validation_freq=1, class_weight=None, max_queue_size=10, workers=1,
                      use_multiprocessing=False, shuffle=True, initial_epoch=0):
        """fit on a generator or Sequence of batches (read in this thread: workers and
        queues are not used)."""
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs,
                        verbose=verbose, callbacks=callbacks, validation_data=validation_data,
                        validation_steps=validation_steps, validation_freq=validation_freq,
                        class_weight=class_weight, shuffle=shuffle,
                        initial_epoch=initial_epoch)

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                           workers=1, use_multiprocessing=False, verbose=0):
        return self.evaluate(generator, steps=steps, verbose=verbose)

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                          workers=1, use_multiprocessing=False, verbose=0):
        return self.predict(generator, steps=steps, verbose=verbose)

    # --- weights on disk ----------------------------------------------------------------------
    def save_weights(self, filepath, overwrite=True, save_format=None):
        saving.save_weights(self, filepath, overwrite, save_format)

    def load_weights(self, filepath, by_name=False, skip_mismatch=False):
        saving.load_weights(self, filepath, by_name, skip_mismatch)

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None):
        """See tf.keras.models.save_model: one HDF5 file (a .h5 path or save_format='h5'), else
        a directory with the architecture, the training configuration and the weights."""
        serialization.save_model(self, filepath, overwrite, include_optimizer, save_format)

    def reset_metrics(self):
        """Metrics are computed per batch and averaged by the loops: nothing to reset."""
