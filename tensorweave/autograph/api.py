"""The public functions of tf.autograph."""
import enum
import functools
import sys

from tensorweave.autograph import conversion
from tensorweave.autograph.conversion import set_verbosity  # noqa: F401 - re-exported


def to_graph(entity, recursive=True, arg_values=None, arg_types=None,
             experimental_optional_features=None):
    """`entity` (a function or method) with its tensor-dependent control flow converted;
    functions it calls are converted when called (always: `recursive` is accepted for TF's
    signature)."""
    if hasattr(entity, "__func__"):
        return functools.partial(to_graph(entity.__func__), entity.__self__)
    if not callable(entity):
        raise TypeError(f"tf.autograph.to_graph: expected a function, got {entity!r}")
    converted = conversion.convert(entity)
    if converted is entity and not getattr(entity, "__autograph_do_not_convert__", False):
        conversion.transformed_source(entity)  # raises the reason it cannot be converted
    return converted


def to_code(entity, recursive=True, arg_values=None, arg_types=None, indentation="  ",
            experimental_optional_features=None):
    """The converted source of `entity`."""
    return conversion.to_code(getattr(entity, "__func__", entity))


def do_not_convert(func=None):
    """Decorator: `func` runs as written, never converted."""
    if func is None:
        return conversion.mark_do_not_convert
    return conversion.mark_do_not_convert(func)


def trace(*args):
    """Prints its arguments at conversion/tracing time (tensors as their symbolic form)."""
    print(*args, file=sys.stdout)  # noqa: T201


class Feature(enum.Enum):
    """tf.autograph.experimental.Feature: the optional conversions TF names. All the ones
    this converter has (boolean operators, print, calls) are always on."""
    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None):
    """As the first statement of a loop body, the options of the tf.while_loop the loop
    becomes (the converter lifts the call out of the body); elsewhere it does nothing."""
