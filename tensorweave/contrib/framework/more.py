"""The rest of tf.contrib.framework that TF 1.x programs call: assigning variables from values
or a checkpoint as (op, feed_dict), variable filters and names, local variables, name-scope
helpers, shape checks, and the deprecation decorators."""
import functools
import logging
import re

import numpy as np

from tensorweave.contrib.framework.variables import get_unique_variable
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import array_ops, math_ops, state_ops
from tensorweave.ops.variables import Variable
from tensorweave.train.checkpoint_management import NewCheckpointReader

_log = logging.getLogger("tensorweave.deprecation")


def local_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A variable in LOCAL_VARIABLES only (not saved, not trained)."""
    return Variable(initial_value, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def zero_initializer(ref, use_locking=True, name="zero_initializer"):
    """An op assigning zeros to the variable `ref`."""
    return state_ops.assign(ref, array_ops.zeros_like(ref), use_locking=use_locking, name=name)


def get_variable_full_name(var):
    """The variable's name without the ":0" (its name in a checkpoint)."""
    return var.op.name


def filter_variables(var_list, include_patterns=None, exclude_patterns=None,
                     reg_search=True):
    """The variables whose names match any include pattern (all when None) and no exclude
    pattern; patterns are regular expressions searched (reg_search) or matched from the start."""
    find = re.search if reg_search else re.match

    def hits(name, patterns):
        return any(find(pattern, name) for pattern in patterns)

    kept = []
    for var in var_list:
        name = var.op.name
        if include_patterns is not None and not hits(name, include_patterns):
            continue
        if exclude_patterns is not None and hits(name, exclude_patterns):
            continue
        kept.append(var)
    return kept


def _placeholder_assign(var, value):
    placeholder = array_ops.placeholder(var.dtype.base_dtype, var.shape,
                                        name=f"{var.op.name}_placeholder")
    return state_ops.assign(var, placeholder), placeholder


def assign_from_values(var_names_to_values):
    """(one op assigning every named variable, the feed_dict of the values it needs)."""
    assigns, feed = [], {}
    for name, value in sorted(var_names_to_values.items()):
        var = get_unique_variable(name)
        value = np.asarray(value)
        if not var.shape.is_compatible_with(value.shape):
            raise ValueError(f"Shape mismatch for variable {name}: the variable is "
                             f"{var.shape}, the value {value.shape}")
        op, placeholder = _placeholder_assign(var, value)
        assigns.append(op)
        feed[placeholder] = value.astype(var.dtype.base_dtype.np_dtype)
    from tensorweave.ops.control_flow_ops import group
    return group(*assigns, name="assign_from_values"), feed


def assign_from_values_fn(var_names_to_values):
    """fn(session) running assign_from_values' op with its feed."""
    op, feed = assign_from_values(var_names_to_values)
    return lambda session: session.run(op, feed)


def assign_from_checkpoint(model_path, var_list, ignore_missing_vars=False):
    """(an op assigning `var_list` (a list, or a dict checkpoint name -> variable or list of
    partitions) from the checkpoint, its feed_dict of the checkpoint's values)."""
    reader = NewCheckpointReader(model_path)
    pairs = var_list.items() if isinstance(var_list, dict) else \
        [(var.op.name, var) for var in var_list]
    assigns, feed = [], {}
    for name, target in pairs:
        if not reader.has_tensor(name):
            if ignore_missing_vars:
                _log.warning("Variable %s missing in checkpoint %s", name, model_path)
                continue
            raise ValueError(f"Tensor {name} is not found in {model_path} checkpoint")
        value = reader.get_tensor(name)
        parts = target if isinstance(target, (list, tuple)) else [target]
        offset = 0
        for part in parts:  # partitioned variables: consecutive slices of the first axis
            rows = part.shape.as_list()[0] if len(parts) > 1 else value.shape[0] if \
                value.ndim else None
            piece = value[offset:offset + rows] if len(parts) > 1 else value
            offset += rows or 0
            if not part.shape.is_compatible_with(piece.shape):
                raise ValueError(f"Shape mismatch for {name}: variable {part.shape}, checkpoint "
                                 f"{piece.shape}")
            op, placeholder = _placeholder_assign(part, piece)
            assigns.append(op)
            feed[placeholder] = piece
    from tensorweave.ops.control_flow_ops import group
    return group(*assigns, name="assign_from_checkpoint"), feed


def get_name_scope():
    """The default graph's current name scope ("" at the top)."""
    return graph_lib.get_default_graph().get_name_scope()


def prepend_name_scope(name, import_scope):
    """`name` with `import_scope/` in front (for op, tensor and ^control names)."""
    if not import_scope:
        return name
    control = name.startswith("^")
    body = name[1:] if control else name
    return ("^" if control else "") + f"{import_scope.rstrip('/')}/{body}"


def strip_name_scope(name, export_scope):
    """`name` without a leading `export_scope/`."""
    if not export_scope:
        return name
    prefix = export_scope.rstrip("/") + "/"
    control = name.startswith("^")
    body = name[1:] if control else name
    if body.startswith(prefix):
        body = body[len(prefix):]
    return ("^" if control else "") + body


def reduce_sum_n(tensors, name=None):
    """The sum of the (summed) tensors: a scalar."""
    tensors = [math_ops.reduce_sum(convert_to_tensor(t)) for t in tensors]
    if not tensors:
        raise ValueError("reduce_sum_n: no tensors")
    return math_ops.add_n(tensors, name=name) if len(tensors) > 1 else tensors[0]


def with_shape(expected_shape, tensor):
    """`tensor`, after checking its static shape is compatible with expected_shape."""
    tensor = convert_to_tensor(tensor)
    if not tensor.shape.is_compatible_with(expected_shape):
        raise ValueError(f"Shape of tensor {tensor.name} {tensor.shape} is not compatible with "
                         f"expected shape {list(expected_shape)}")
    tensor.set_shape(expected_shape)
    return tensor


def with_same_shape(expected_tensor, tensor):
    return with_shape(convert_to_tensor(expected_tensor).shape.as_list(), tensor)


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating dtype of the tensors (and `dtype`); ValueError if they differ."""
    found = dtypes.as_dtype(dtype) if dtype is not None else None
    for tensor in tensors or []:
        kind = tensor.dtype.base_dtype
        if found is None:
            found = kind
        elif kind != found:
            raise ValueError(f"Expected {found.name} for {tensor.name}, got {kind.name}")
    found = found or dtypes.float32
    if not found.is_floating:
        raise ValueError(f"Expected floating point type, got {found.name}")
    return found


def _deprecation_message(what, date, instructions):
    when = "in a future version" if date is None else f"after {date}"
    return f"{what} is deprecated and will be removed {when}. Instructions for updating: " \
           f"{instructions}"


def deprecated(date, instructions, warn_once=True):
    """A decorator logging a deprecation warning (once) when the function is called."""
    def decorate(fn):
        warned = []

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not (warn_once and warned):
                warned.append(True)
                _log.warning(_deprecation_message(fn.__qualname__, date, instructions))
            return fn(*args, **kwargs)
        return wrapper
    return decorate


def deprecated_args(date, instructions, *deprecated_arg_names):
    """A decorator warning when any of the named arguments is passed."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            used = [name for name in deprecated_arg_names if name in kwargs]
            if used:
                _log.warning(_deprecation_message(
                    f"Arguments {used} of {fn.__qualname__}", date, instructions))
            return fn(*args, **kwargs)
        return wrapper
    return decorate


def deprecated_arg_values(date, instructions, **deprecated_kwargs):
    """A decorator warning when a named argument is passed with the given value."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for name, value in deprecated_kwargs.items():
                if name in kwargs and kwargs[name] == value:
                    _log.warning(_deprecation_message(
                        f"{fn.__qualname__}({name}={value!r})", date, instructions))
            return fn(*args, **kwargs)
        return wrapper
    return decorate

