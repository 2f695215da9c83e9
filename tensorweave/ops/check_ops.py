"""`tf.debugging.assert_*`: checks built on the Assert op (debug_ops.py).

Each returns an op to run or depend on (tf.control_dependencies). When the values (or the rank,
or the dtype) are known at build time, a failing check fails at once, where the user wrote it:
InvalidArgumentError for values, ValueError for ranks, TypeError for dtypes, as TF 1.x does.
"""
import numpy as np

from tensorweave.framework import composite_tensor
from tensorweave.framework import dtypes
from tensorweave.framework import errors
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_util
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import control_flow_ops
from tensorweave.ops import math_ops
from tensorweave.ops import reduction_ops
from tensorweave.ops.debug_ops import Assert

# name -> (graph comparison, NumPy comparison, symbol in the message)
_COMPARISONS = {
    "equal": (math_ops.equal, np.equal, "=="),
    "none_equal": (math_ops.not_equal, np.not_equal, "!="),
    "less": (math_ops.less, np.less, "<"),
    "less_equal": (math_ops.less_equal, np.less_equal, "<="),
    "greater": (math_ops.greater, np.greater, ">"),
    "greater_equal": (math_ops.greater_equal, np.greater_equal, ">="),
}


def _is_symbolic(value):
    return isinstance(value, graph_lib.Tensor) or hasattr(value, "_as_graph_element")


def _binary_assert(kind, x, y, data, summarize, message, name):
    dispatched = composite_tensor.dispatch_binary_assert(
        globals()[f"assert_{kind}"], x, y,
        {"data": data, "summarize": summarize, "message": message, "name": name})
    if dispatched is not NotImplemented:
        return dispatched
    graph_compare, numpy_compare, symbol = _COMPARISONS[kind]
    with graph_lib.name_scope(name, f"assert_{kind}", [t for t in (x, y) if _is_symbolic(t)]):
        if _is_symbolic(y) and not _is_symbolic(x):
            y = convert_to_tensor(y)
            x = convert_to_tensor(x, dtype=y.dtype)
        else:
            x = convert_to_tensor(x)
            y = convert_to_tensor(y, dtype=x.dtype)
        if data is None:
            data = ([message] if message else []) + [
                f"Condition x {symbol} y did not hold element-wise:", f"x ({x.name}) = ", x,
                f"y ({y.name}) = ", y]
        x_value, y_value = tensor_util.constant_value(x), tensor_util.constant_value(y)
        if x_value is not None and y_value is not None and \
                not np.all(numpy_compare(x_value, y_value)):
            raise errors.InvalidArgumentError(None, None, _static_message(data))
        return Assert(reduction_ops.reduce_all(graph_compare(x, y)), data, summarize=summarize)


def _static_message(data):
    parts = []
    for item in data:
        value = tensor_util.constant_value(convert_to_tensor(item)) if _is_symbolic(item) \
            else item
        parts.append(str(item if value is None else value))
    return "assertion failed (static check): " + " ".join(f"[{p}]" for p in parts)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("equal", x, y, data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("none_equal", x, y, data, summarize, message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("less", x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("less_equal", x, y, data, summarize, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("greater", x, y, data, summarize, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("greater_equal", x, y, data, summarize, message, name)


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None):
    """|x - y| <= atol + rtol * |y| element-wise; both tolerances default to 10 epsilons of
    the (floating-point) dtype."""
    with graph_lib.name_scope(name, "assert_near", [t for t in (x, y) if _is_symbolic(t)]):
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype=x.dtype)
        if not x.dtype.is_floating:
            raise TypeError(f"assert_near compares floating-point tensors; {x.name} is "
                            f"{x.dtype.name} (use assert_equal)")
        eps = float(np.finfo(x.dtype.np_dtype).eps)
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, dtype=x.dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, dtype=x.dtype)
        if data is None:
            data = ([message] if message else []) + [
                "x and y not equal to tolerance rtol = ", rtol, ", atol = ", atol,
                f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        distance = math_ops.abs(x - y)
        return _binary_assert("less_equal", distance, atol + rtol * math_ops.abs(y), data,
                              summarize, message, None)


def _sign_assert(kind, symbol, x, data, summarize, message, name, default_name):
    x = convert_to_tensor(x)
    with graph_lib.name_scope(name, default_name, [x]):
        zero = array_ops.zeros([], dtype=x.dtype)
        if data is None:
            data = ([message] if message else []) + [
                f"Condition x {symbol} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        return _binary_assert(kind, zero, x, data, summarize, message, None)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("less", ">", x, data, summarize, message, name, "assert_positive")


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("greater", "<", x, data, summarize, message, name, "assert_negative")


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("less_equal", ">=", x, data, summarize, message, name,
                        "assert_non_negative")


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert("greater_equal", "<=", x, data, summarize, message, name,
                        "assert_non_positive")


# --- ranks, types, shapes ----------------------------------------------------------------------
def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """ValueError at build time when x's rank is static and wrong, else a run-time Assert."""
    return _rank_check(x, rank, message, name, data, summarize, at_least=False)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    return _rank_check(x, rank, message, name, data, summarize, at_least=True)


def _rank_check(x, rank, message, name, data, summarize, at_least):
    x = convert_to_tensor(x)
    what = "at least " if at_least else ""
    with graph_lib.name_scope(name, "assert_rank_at_least" if at_least else "assert_rank", [x]):
        static_rank = tensor_util.constant_value(convert_to_tensor(rank))
        if x.shape.ndims is not None and static_rank is not None:
            expected = int(static_rank)
            if x.shape.ndims < expected or (not at_least and x.shape.ndims != expected):
                raise ValueError(f"{message + ' ' if message else ''}Tensor {x.name} must have "
                                 f"rank {what}{expected}; received rank {x.shape.ndims}, "
                                 f"shape {x.shape}")
            return control_flow_ops.no_op(name="static_checks_determined_all_ok")
        actual = array_ops.rank(x)
        compare = math_ops.greater_equal if at_least else math_ops.equal
        condition = compare(actual, convert_to_tensor(rank, dtype=dtypes.int32))
        if data is None:
            data = ([message] if message else []) + [
                f"Tensor {x.name} must have rank {what}", rank, "Received shape:",
                array_ops.shape(x)]
        return Assert(condition, data, summarize=summarize)


def assert_type(tensor, tf_type, message=None, name=None):
    """A build-time check: TypeError unless tensor has dtype tf_type."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != dtypes.as_dtype(tf_type):
        raise TypeError(f"{message + ' ' if message else ''}{tensor.name} must be of type "
                        f"{dtypes.as_dtype(tf_type).name}, got {tensor.dtype.name}")
    return control_flow_ops.no_op(name=name or "statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    x = convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(f"{message + ' ' if message else ''}Expected integer type for {x.name}, "
                        f"got {x.dtype.name}")
    return control_flow_ops.no_op(name=name or "statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    tensor = convert_to_tensor(tensor)
    if tensor.shape.ndims != 0:
        raise ValueError(f"{message + ' ' if message else ''}Expected scalar shape for "
                         f"{tensor.name}, got {tensor.shape}")
    return tensor


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Checks (tensor, dims) pairs: dims are ints, None (any size) or names that must stand for
    the same size wherever they appear. Static mismatches raise ValueError; the rest become
    run-time Asserts, grouped into the returned op."""
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    with graph_lib.name_scope(name, "assert_shapes", [convert_to_tensor(t) for t, _ in pairs]):
        checks, symbols = [], {}
        for tensor, dims in pairs:
            tensor = convert_to_tensor(tensor)
            dims = list(dims)
            checks.append(assert_rank(tensor, len(dims), message=message))
            static = tensor.shape.as_tuple()
            for axis, expected in enumerate(dims):
                if expected is None:
                    continue
                size = static[axis] if static is not None and static[axis] is not None else \
                    array_ops.shape(tensor)[axis]
                if isinstance(expected, str):
                    if expected not in symbols:
                        symbols[expected] = (size, tensor.name, axis)
                        continue
                    expected, source, source_axis = symbols[expected]
                    label = f"dimension {source_axis} of {source}"
                else:
                    label = str(expected)
                if not _is_symbolic(size) and not _is_symbolic(expected):
                    if size != expected:
                        raise ValueError(f"{message + ' ' if message else ''}dimension {axis} "
                                         f"of {tensor.name} is {size}, expected {label} "
                                         f"({expected})")
                    continue
                checks.append(assert_equal(size, expected, data=data, summarize=summarize,
                                           message=f"{message or ''} dimension {axis} of "
                                                   f"{tensor.name} must equal {label}"))
        return control_flow_ops.group(*[c for c in checks if not isinstance(c, graph_lib.Tensor)])
