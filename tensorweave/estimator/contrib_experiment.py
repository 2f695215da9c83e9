"""`tf.contrib.learn.Experiment` and `learn_runner.run`: train and evaluate an estimator from
input functions, the way TF 1.x's learn_runner scripts drive it."""
import inspect

from tensorweave.estimator.run_config import RunConfig

_SCHEDULES = ("train", "evaluate", "train_and_evaluate", "test")


class Experiment:
    def __init__(self, estimator, train_input_fn, eval_input_fn, eval_metrics=None,
                 train_steps=None, eval_steps=100, train_monitors=None, eval_hooks=None,
                 min_eval_frequency=None, eval_delay_secs=0, **unused):
        if train_input_fn is None or eval_input_fn is None:
            raise ValueError("Experiment needs train_input_fn and eval_input_fn")
        if eval_metrics:
            raise ValueError("Experiment: eval_metrics is not supported; add eval_metric_ops "
                             "to the model_fn")
        self._estimator = estimator
        self._train_input_fn, self._eval_input_fn = train_input_fn, eval_input_fn
        self._train_steps, self._eval_steps = train_steps, eval_steps
        self._train_monitors, self._eval_hooks = train_monitors, eval_hooks

    @property
    def estimator(self):
        return self._estimator

    @property
    def train_steps(self):
        return self._train_steps

    @property
    def eval_steps(self):
        return self._eval_steps

    def train(self, delay_secs=None):
        return self._estimator.fit(input_fn=self._train_input_fn, max_steps=self._train_steps,
                                   monitors=self._train_monitors)

    def evaluate(self, delay_secs=None, name=None):
        return self._estimator.evaluate(input_fn=self._eval_input_fn, steps=self._eval_steps,
                                        hooks=self._eval_hooks, name=name)

    def test(self):
        """One training step and one evaluation step: a smoke test of the experiment."""
        self._estimator.fit(input_fn=self._train_input_fn, steps=1,
                            monitors=self._train_monitors)
        return self._estimator.evaluate(input_fn=self._eval_input_fn, steps=1, name="one_pass")

    def train_and_evaluate(self):
        self.train()
        return self.evaluate(), []


def run(experiment_fn, output_dir=None, schedule=None, run_config=None, hparams=None):
    """Builds the experiment (experiment_fn(output_dir) or experiment_fn(run_config, hparams))
    and runs `schedule` (train_and_evaluate by default)."""
    schedule = schedule or "train_and_evaluate"
    if schedule not in _SCHEDULES:
        raise ValueError(f"learn_runner.run: schedule must be one of {_SCHEDULES}, got "
                         f"{schedule!r}")
    if output_dir is not None and run_config is not None:
        raise ValueError("learn_runner.run: give output_dir or run_config, not both")
    if run_config is not None or len(inspect.signature(experiment_fn).parameters) == 2:
        config = run_config or RunConfig(model_dir=output_dir)
        experiment = experiment_fn(config, hparams)
    else:
        experiment = experiment_fn(output_dir)
    if not isinstance(experiment, Experiment):
        raise TypeError(f"experiment_fn must return an Experiment, got "
                        f"{type(experiment).__name__}")
    return getattr(experiment, schedule)()
