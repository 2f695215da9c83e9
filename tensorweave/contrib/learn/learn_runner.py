"""`tf.contrib.learn.learn_runner`: run(experiment_fn, ...) (estimator/contrib_experiment.py)."""
from tensorweave.platform import extensions as _extensions


def run(experiment_fn, output_dir=None, schedule=None, run_config=None, hparams=None):
    return _extensions.find("contrib.learn.learn_runner", "run")(
        experiment_fn, output_dir=output_dir, schedule=schedule, run_config=run_config,
        hparams=hparams)
