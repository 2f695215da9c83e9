"""Debugging ops: CheckNumerics, Assert (the tf.debugging.assert_* checks of check_ops.py build
on it), StringFormat + PrintV2 (`tf.print`) and TF 1.x's identity-with-side-effect `tf.Print`.

Assert and PrintV2 have no outputs: run them, or make other ops depend on them with
tf.control_dependencies. A failed Assert raises InvalidArgumentError naming the op, with its
data formatted into the message.
"""
import sys

from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import output_streams
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_op, make_tensor

_FLOAT = (dtypes.float16, dtypes.float32, dtypes.float64)


# --- CheckNumerics -----------------------------------------------------------------------------
register_op("CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
            attrs={"T": "type", "message": "string"}, shape_fn=common_shapes.unchanged,
            allowed_types={"T": _FLOAT},
            doc="Its input, unchanged; fails naming the op and `message` if it holds a NaN or "
                "an infinity.")


@register_gradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    message = ("Not a number (NaN) or infinity (Inf) values detected in gradient. " +
               op.get_attr("message"))
    return [check_numerics(grad, message)]


def check_numerics(tensor, message, name=None):
    return make_tensor("CheckNumerics", [convert_to_tensor(tensor)], {"message": message},
                       name or "CheckNumerics")


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """t (or x, TF 1.x's newer name) unchanged, after checking it has no NaN or Inf."""
    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None or msg is None:
        raise ValueError("assert_all_finite needs a tensor (t= or x=) and a message (msg= or "
                         "message=)")
    return check_numerics(t, msg, name=name or "VerifyFinite")


# --- Assert ------------------------------------------------------------------------------------
def _assert_shape(op):
    condition = op.inputs[0].shape
    if condition.ndims not in (None, 0):
        raise ValueError(f"the condition must be a scalar, got shape {condition}")
    return []


register_op("Assert", inputs=["condition: bool", "data: T"], attrs={"T": "list(type)",
                                                                    "summarize": ("int", 3)},
            shape_fn=_assert_shape, stateful=True,
            doc="Fails with InvalidArgumentError, its data in the message, if condition is "
                "False.")
not_differentiable("Assert")


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """The op that checks `condition` when run; `data` (tensors or strings) is printed if not."""
    data = [convert_to_tensor(d) for d in data]
    return make_op("Assert", [convert_to_tensor(condition, dtypes.bool), data],
                   {"summarize": 3 if summarize is None else summarize}, name or "Assert")


# --- StringFormat, PrintV2 ---------------------------------------------------------------------
register_op("StringFormat", inputs=["inputs: T"], outputs=["output: string"],
            attrs={"T": "list(type)", "template": ("string", "%s"),
                   "placeholder": ("string", "%s"), "summarize": ("int", 3)},
            shape_fn=common_shapes.scalar,
            doc="The template with each placeholder replaced by the next input, summarized to "
                "`summarize` entries at each end of every dimension (-1: all).")
not_differentiable("StringFormat")

register_op("PrintV2", inputs=["input: string"],
            attrs={"output_stream": ("string", "stderr"), "end": ("string", "\n")},
            shape_fn=common_shapes.no_outputs, stateful=True,
            doc="Writes its scalar string input to output_stream (see "
                "framework/output_streams.py).")
not_differentiable("PrintV2")


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """`tf.strings.format`: the template with each placeholder replaced by a formatted tensor."""
    inputs = [convert_to_tensor(t) for t in (inputs if isinstance(inputs, (list, tuple))
                                             else [inputs])]
    if template.count(placeholder) != len(inputs):
        raise ValueError(f"tf.strings.format: the template has {template.count(placeholder)} "
                         f"placeholders {placeholder!r} for {len(inputs)} inputs")
    return make_tensor("StringFormat", [inputs], {"template": template,
                                                  "placeholder": placeholder,
                                                  "summarize": summarize},
                       name or "StringFormat")


def _is_symbolic(value):
    return isinstance(value, graph_lib.Tensor) or hasattr(value, "_as_graph_element")


def _template_parts(value, tensors, placeholder):
    """The template text for one tf.print argument; its tensors are appended to `tensors`."""
    if _is_symbolic(value):
        tensors.append(convert_to_tensor(value))
        return placeholder
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_template_parts(v, tensors, placeholder) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_template_parts(v, tensors, placeholder)}"
                               for k, v in value.items()) + "}"
    return str(value)


def print_v2(*inputs, **kwargs):
    """`tf.print`: writes its arguments (tensors formatted when the op runs, other values as
    str) separated by `sep` to `output_stream` (default sys.stderr). Returns the PrintV2 op."""
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep, end, name = kwargs.pop("sep", " "), kwargs.pop("end", "\n"), kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"tf.print: unexpected arguments {sorted(kwargs)}")
    stream = output_streams.name_for(output_stream)
    texts = [str(v) for v in inputs if not _is_symbolic(v)]
    placeholder = "{}"
    while any(placeholder in text for text in texts):  # a literal "{}" must stay literal
        placeholder = "{" + placeholder + "}"
    tensors = []
    template = sep.join(_template_parts(v, tensors, placeholder) for v in inputs)
    with graph_lib.name_scope(name, "PrintV2", tensors or None):
        formatted = string_format(template, tensors, placeholder=placeholder,
                                  summarize=summarize)
        return make_op("PrintV2", [formatted], {"output_stream": stream, "end": end})


# --- Print (TF 1.x) ----------------------------------------------------------------------------
register_op("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
            attrs={"T": "type", "U": "list(type)", "message": ("string", ""),
                   "first_n": ("int", -1), "summarize": ("int", 3)},
            shape_fn=common_shapes.unchanged, stateful=True,
            doc="Its input, unchanged; as a side effect writes message and the first "
                "`summarize` values of each data tensor to stderr, the first `first_n` times "
                "it runs (every time when first_n < 0).")


@register_gradient("Print")
def _print_grad(op, *grads):
    return [grads[0]] + [None] * (len(op.inputs) - 1)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """`tf.Print`: identity on input_ that prints data when it runs."""
    data = [convert_to_tensor(d) for d in data]
    return make_tensor("Print", [convert_to_tensor(input_), data],
                       {"message": message or "", "first_n": -1 if first_n is None else first_n,
                        "summarize": 3 if summarize is None else summarize}, name or "Print")
