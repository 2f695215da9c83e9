"""The import finder behind `--as-tensorflow` and transparent mode: once `install()` has run,
scripts written for TensorFlow 1.x and Horovod import tensorweave instead:

    import tensorflow as tf                    -> tensorweave
    import tensorflow.compat.v1 as tf          -> tensorweave.compat.v1
    import horovod.tensorflow as hvd           -> tensorweave.horovod

The finder goes first on sys.meta_path and answers those names with the tensorweave modules
(the same module objects: nothing is imported twice). It lives in the platform layer so that
both the `tensorweave run` launcher (cli/as_tensorflow.py) and `python -m
tensorweave.transparent` can install it.
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types

_PREFIXES = (("horovod.tensorflow", "tensorweave.horovod"), ("tensorflow", "tensorweave"))


def target_of(name):
    """The tensorweave module answering `name`, "" for the bare `horovod` package, or None."""
    if name == "horovod":
        return ""
    for prefix, replacement in _PREFIXES:
        if name == prefix or name.startswith(prefix + "."):
            return replacement + name[len(prefix):]
    return None


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if target_of(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        target = target_of(spec.name)
        if target == "":  # `horovod` itself: a namespace holding `horovod.tensorflow`
            module = types.ModuleType("horovod")
            module.__path__ = []
            return module
        return importlib.import_module(target)

    def exec_module(self, module):
        pass


_FINDER = _Alias()


def install():
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
