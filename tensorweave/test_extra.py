"""The tf.test names beyond TestCase and the gradient checks (re-exported by tf.test)."""
import functools
import os
import platform
import unittest

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# tf.test.is_cpu_target_available's target names, by the machine strings that run them.
_CPU_TARGETS = {"x86": ("x86_64", "amd64", "i386", "i686"), "aarch64": ("aarch64", "arm64"),
                "arm": ("armv7l", "arm"), "powerpc": ("ppc64le", "ppc64"),
                "systemz": ("s390x",)}


class StubOutForTesting:
    """Replaces attributes for a test and puts them back (TF's googletest helper)."""

    def __init__(self):
        self._saved = []

    def Set(self, parent, child_name, new_child):  # noqa: N802 - TF's method names
        self._saved.append((parent, child_name, getattr(parent, child_name)))
        setattr(parent, child_name, new_child)

    def SmartSet(self, obj, attr_name, new_attr):  # noqa: N802
        """Like Set, but restores a class's own attribute correctly (a staticmethod stays
        one), and deletes an attribute that only an ancestor had."""
        owned = attr_name in getattr(obj, "__dict__", {})
        old = obj.__dict__[attr_name] if owned else None
        self._saved.append((obj, attr_name, old if owned else _INHERITED))
        setattr(obj, attr_name, new_attr)

    def UnsetAll(self):  # noqa: N802
        for parent, name, old in reversed(self._saved):
            if old is _INHERITED:
                delattr(parent, name)
            else:
                setattr(parent, name, old)
        self._saved = []

    SmartUnsetAll = UnsetAll
    CleanUp = UnsetAll

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.UnsetAll()
        return False


_INHERITED = object()


def benchmark_config():
    """A ConfigProto for benchmarks: the default one (no Grappler passes to turn off here)."""
    from tensorweave.runtime.config import ConfigProto
    return ConfigProto()


def disable_with_predicate(pred, skip_message):
    """Decorator: skips the test when `pred()` is true."""
    def decorate(test):
        @functools.wraps(test)
        def run(self, *args, **kwargs):
            if pred():
                raise unittest.SkipTest(skip_message)
            return test(self, *args, **kwargs)
        return run
    return decorate


def with_eager_op_as_function(cls=None, only_as_function=False):
    """TF runs a test class twice, eagerly and as functions; graph mode has one way: the class
    is returned unchanged."""
    if cls is None:
        return lambda real: real
    return cls


def is_cpu_target_available(target):
    """Whether this machine's CPU is of `target` ("x86", "aarch64", ...)."""
    machine = platform.machine().lower()
    return machine in _CPU_TARGETS.get(str(target).lower(), (str(target).lower(),))


def test_src_dir_path(relative_path):
    """The path of `relative_path` inside the installed tensorweave package."""
    return os.path.join(_PACKAGE_DIR, relative_path)


def sync_devices():
    """Every Session.run returns after its step finished on every device: nothing to wait
    for (tf.test.experimental.sync_devices)."""


class experimental:  # noqa: N801 - the tf.test.experimental namespace
    sync_devices = staticmethod(sync_devices)
