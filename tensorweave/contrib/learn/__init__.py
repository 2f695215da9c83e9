"""`tf.contrib.learn`: the mode keys, the MNIST and CSV loaders, and the TF 1.0-1.3 estimators
over arrays or input functions, Experiment and learn_runner. The estimators are built in
estimator/contrib_learn.py (a sibling component) and answered here through
platform/extensions."""
from tensorweave.contrib.learn.mode_keys import ModeKeys  # noqa: F401
from tensorweave.contrib.learn import datasets  # noqa: F401
from tensorweave.contrib.learn import learn_runner  # noqa: F401
from tensorweave.contrib.learn import preprocessing  # noqa: F401
from tensorweave.platform import extensions as _extensions


def __getattr__(name):
    return _extensions.find("contrib.learn", name)


def __dir__():
    return sorted(set(globals()) | set(_extensions.names("contrib.learn")))
