"""The tf.experimental switches of TF's eager runtime, with their graph-mode meaning.

- async_scope / async_clear_error: eager async dispatch. A Session step already runs its ops
  asynchronously and reports the first error when run() returns; there is no pending error
  to clear between steps: the scope and the clear do nothing.
- function_executor_type(name): picks TF's executor for tf.function calls; calls here run on
  the session's executor whatever the name: recorded (current_function_executor_type) only.
- output_all_intermediates(state): makes TF's control flow v2 keep every intermediate for
  gradients; tf.while_loop here keeps what its gradient needs when back_prop is on: recorded.
- enable_strict_mode(): TF turns deprecation warnings into errors; tensorweave has no
  deprecated paths that warn: recorded (strict_mode_enabled).
- register_filesystem_plugin(path): a C++ plugin; refused as tf.load_file_system_library.
"""
import contextlib

from tensorweave.load_library import _refuse

_settings = {"executor": None, "all_intermediates": None, "strict": False}


@contextlib.contextmanager
def async_scope():
    yield


def async_clear_error():
    """Nothing pending between graph steps: a no-op."""


@contextlib.contextmanager
def function_executor_type(executor_type):
    previous = _settings["executor"]
    _settings["executor"] = executor_type
    try:
        yield
    finally:
        _settings["executor"] = previous


def current_function_executor_type():
    return _settings["executor"]


def output_all_intermediates(state):
    if state not in (True, False, None):
        raise ValueError(f"output_all_intermediates: expected True, False or None, got "
                         f"{state!r}")
    _settings["all_intermediates"] = state


def enable_strict_mode():
    _settings["strict"] = True


def strict_mode_enabled():
    return _settings["strict"]


def register_filesystem_plugin(plugin_location):
    _refuse(plugin_location, "tf.experimental.register_filesystem_plugin")
