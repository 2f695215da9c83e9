"""`tf.variable_creator_scope`: functions that intercept every `tf.Variable(...)` made in the
scope, on the default graph (as TF's creator stack is per graph).

A creator is `creator(next_creator, **kwargs)`: it may change the keyword arguments (name,
initial_value, trainable, ...), call `next_creator(**kwargs)` to make the variable, or return
something else; creators nest, the innermost running first. Positional arguments of
`tf.Variable(...)` reach a creator as their keyword names.
"""
import contextlib

from tensorweave.framework import graph as graph_lib

# tf.Variable's positional parameters, in order (ops/variables.py: Variable._init).
_PARAMETERS = ("initial_value", "trainable", "collections", "validate_shape", "caching_device",
               "name", "variable_def", "dtype", "expected_shape", "import_scope", "constraint",
               "use_resource", "synchronization", "aggregation", "shape")
_STACK_ATTR = "_variable_creator_stack"


def _stack(graph):
    stack = getattr(graph, _STACK_ATTR, None)
    if stack is None:
        stack = []
        setattr(graph, _STACK_ATTR, stack)
    return stack


class VariableMetaclass(type):
    """Routes `Variable(...)` through the default graph's creators, if any."""

    def __call__(cls, *args, **kwargs):
        stack = list(_stack(graph_lib.get_default_graph()))
        if not stack:
            return super().__call__(*args, **kwargs)
        if len(args) > len(_PARAMETERS):
            raise TypeError(f"tf.Variable takes at most {len(_PARAMETERS)} positional "
                            f"arguments, got {len(args)}")
        kwargs.update(zip(_PARAMETERS, args))

        def make(index, **arguments):
            if index < 0:
                return super(VariableMetaclass, cls).__call__(**arguments)
            return stack[index](lambda **inner: make(index - 1, **inner), **arguments)
        return make(len(stack) - 1, **kwargs)


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Within the scope, `variable_creator` sees (and may change) every variable created on
    the default graph."""
    if not callable(variable_creator):
        raise TypeError(f"tf.variable_creator_scope: the creator must be callable, got "
                        f"{variable_creator!r}")
    stack = _stack(graph_lib.get_default_graph())
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.remove(variable_creator)
