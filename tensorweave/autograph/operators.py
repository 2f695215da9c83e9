"""What converted code calls (transformer.py writes the calls): control flow that becomes
tf.cond / tf.while_loop when its condition (or iterable) is a tensor, and stays Python when
it is a Python value, so converted code keeps its Python meaning off tensors."""
import functools
import inspect

from tensorweave.autograph import conversion
from tensorweave.framework.graph import Tensor
from tensorweave.ops import array_ops, control_flow_ops, math_ops
from tensorweave.ops.debug_ops import print_v2


class Undefined:
    """The value of a variable not yet assigned when a statement starts."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined variable {self.name!r}>"

    def __getattr__(self, attr):
        raise NameError(f"autograph: variable {self.name!r} is used before it is assigned "
                        "(it is assigned on only some paths of a tensor-dependent if or loop)")


def ld(read, name):
    """`read()` (a variable's value), or Undefined(name) if it has none yet."""
    try:
        return read()
    except NameError:
        return Undefined(name)


def _is_tensor(value):
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


def _check_defined(values, names, what):
    for value, name in zip(values, names):
        if isinstance(value, Undefined):
            raise ValueError(f"autograph: {name!r} must be defined before the {what} or on "
                             f"every path through it, since its condition is a tensor")


def if_stmt(cond, then_fn, else_fn, state, names):
    if not _is_tensor(cond):
        return then_fn(*state) if cond else else_fn(*state)

    def branch(fn):
        def run():
            values = fn(*state)
            _check_defined(values, names, "if statement")
            return tuple(values) if values else control_flow_ops.no_op()
        return run
    result = control_flow_ops.cond(cond, branch(then_fn), branch(else_fn), strict=True)
    return tuple(result) if names else ()


def _split_undefined(state):
    """(positions of defined values, their values): undefined ones are loop temporaries."""
    defined = [i for i, value in enumerate(state) if not isinstance(value, Undefined)]
    return defined, [state[i] for i in defined]


def _loop_kwargs(options, defined, state):
    kwargs = {k: options[k] for k in ("parallel_iterations", "swap_memory",
                                      "maximum_iterations") if options.get(k) is not None}
    invariants = options.get("shape_invariants")
    if invariants:
        shapes = [None] * len(defined)
        for variable, shape in invariants:
            for position, index in enumerate(defined):
                if state[index] is variable:
                    shapes[position] = shape
        kwargs["shape_invariants"] = [
            shape if shape is not None else state[index].shape if _is_tensor(state[index])
            else None for shape, index in zip(shapes, defined)]
    return kwargs


def _full_state(state, defined, values):
    full = list(state)
    for index, value in zip(defined, values):
        full[index] = value
    return full


def while_stmt(test_fn, body_fn, state, names, options):
    state = list(state)
    first = test_fn(*state)
    # A Python condition runs the loop in Python; once an iteration makes it a tensor (a
    # `break` flag set under a tensor `if`), the rest of the loop becomes a tf.while_loop
    # starting from that iteration's state.
    while not _is_tensor(first):
        if not first:
            return tuple(state)
        state = list(body_fn(*state))
        first = test_fn(*state)
    defined, values = _split_undefined(state)

    def cond(*loop_values):
        return test_fn(*_full_state(state, defined, loop_values))

    def body(*loop_values):
        result = body_fn(*_full_state(state, defined, loop_values))
        return tuple(result[i] for i in defined)
    kwargs = _loop_kwargs(options, defined, state)
    if "shape_invariants" in kwargs and None in kwargs["shape_invariants"]:
        kwargs.pop("shape_invariants")
    result = control_flow_ops.while_loop(cond, body, values, **kwargs) if values else ()
    if len(values) == 1:
        result = (result,) if not isinstance(result, (list, tuple)) else result
    return tuple(_full_state(state, defined, result))


def for_stmt(iterable, body_fn, state, names, options):
    if not _is_tensor(iterable):
        state = list(state)
        for item in iterable:
            state = list(body_fn(item, *state))
        return tuple(state)
    tensor = iterable
    count = array_ops.shape(tensor)[0]
    index_name = "for_index__"

    def test_fn(index, *rest):
        return math_ops.less(index, count)

    def body(index, *rest):
        item = array_ops.gather(tensor, index)
        return (index + 1, *body_fn(item, *rest))
    result = while_stmt(test_fn, body, (0, *state), (index_name, *names), options)
    return tuple(result[1:])


def and_(*operands):
    value = operands[0]()
    for operand in operands[1:]:
        if _is_tensor(value):
            value = math_ops.logical_and(value, operand())
        elif not value:
            return value
        else:
            value = operand()
    return value


def or_(*operands):
    value = operands[0]()
    for operand in operands[1:]:
        if _is_tensor(value):
            value = math_ops.logical_or(value, operand())
        elif value:
            return value
        else:
            value = operand()
    return value


def not_(value):
    return math_ops.logical_not(value) if _is_tensor(value) else not value


def print_(*args, **kwargs):
    if any(_is_tensor(a) for a in args):
        return print_v2(*args, **{k: v for k, v in kwargs.items()
                                   if k in ("sep", "end", "output_stream")})
    print(*args, **kwargs)  # noqa: T201 - the program's own print
    return None


def converted_call(func, *args, **kwargs):
    """`func(*args, **kwargs)`, with `func` converted first when it is user Python code."""
    target = func
    if inspect.ismethod(func):
        converted = conversion.convert(func.__func__)
        if converted is not func.__func__:
            target = functools.partial(converted, func.__self__)
    elif inspect.isfunction(func):
        target = conversion.convert(func)
    return target(*args, **kwargs)
