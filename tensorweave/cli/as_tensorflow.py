"""`--as-tensorflow`: in the processes `tensorweave run` starts (and only there), scripts
written for TensorFlow 1.x and Horovod import tensorweave instead (`import tensorflow` ->
tensorweave, `import horovod.tensorflow` -> tensorweave.horovod; the finder is
platform/tensorflow_alias.py).

The launcher prepends tensorflow_shim/ to the children's PYTHONPATH; its sitecustomize.py calls
install(), then runs any sitecustomize the environment had. The user's own environment is
never changed.
"""
import os

from tensorweave.platform.tensorflow_alias import install, target_of  # noqa: F401

SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tensorflow_shim")


def child_environment(environ):
    """The environment of a launched process: the shim first on PYTHONPATH."""
    path = environ.get("PYTHONPATH", "")
    return {"PYTHONPATH": SHIM_DIR + (os.pathsep + path if path else "")}
