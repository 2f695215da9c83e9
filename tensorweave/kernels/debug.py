"""Kernels of the debugging ops: CheckNumerics, Assert, StringFormat, PrintV2 and Print.

Tensors are formatted with NumPy's array printer: `summarize` entries at each end of every
dimension (the middle elided as "..."), all of them when summarize is -1.
"""
import sys
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import output_streams
from tensorweave.kernels.registry import register_kernel


def format_value(value, summarize, quote_strings=False):
    """A tensor's value as text: strings as they are (in double quotes for tf.print, as TF),
    booleans as 1 and 0, arrays by NumPy's printer."""
    value = np.asarray(value)
    if value.dtype == object:
        if value.ndim == 0:
            text = _as_text(value[()])
            return f'"{text}"' if quote_strings else text
        try:
            value = np.char.decode(value.astype(np.bytes_), "utf-8", "replace")
        except (UnicodeEncodeError, TypeError):
            value = value.astype(np.str_)
        if quote_strings:
            value = np.char.add(np.char.add('"', value), '"')
    threshold = sys.maxsize if summarize < 0 else 0
    return np.array2string(value, threshold=threshold, edgeitems=max(summarize, 1),
                           max_line_width=sys.maxsize, separator=" ",
                           formatter=_FORMATTERS)


def _format_float(number):
    """As TF prints floats: the shorter of 6 and 9 significant digits that reads back exactly
    for float32 (float16 printed as float32), of 15 and 17 for float64; "1", never "1."."""
    if np.asarray(number).dtype == np.float64:
        kind, short, full = np.float64, 15, 17
    else:
        kind, short, full = np.float32, 6, 9
    number = kind(number)
    text = f"{float(number):.{short}g}"
    if np.isfinite(number) and kind(text) != number:
        text = f"{float(number):.{full}g}"
    return text


# Unpadded entries ("[0 1 ... 98 99]", not "[ 0  1 ... 98 99]"), strings without quotes (the
# caller adds them), booleans as 1 and 0 (TF prints them so).
_FORMATTERS = {"float_kind": _format_float, "int": str, "bool": lambda b: str(int(b)),
               "numpystr": str}


def _as_text(item):
    return item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)


@register_kernel("CheckNumerics", forwards_input=True)
def check_numerics(x, *, message):
    x = np.asarray(x)
    if not np.isfinite(x).all():
        kinds = [kind for kind, fn in (("Inf", np.isinf), ("NaN", np.isnan)) if fn(x).any()]
        raise errors.InvalidArgumentError(None, None, f"{message} : Tensor had "
                                          f"{' and '.join(kinds)} values")
    return x


@register_kernel("Assert")
def assert_(condition, *data, summarize):
    condition = np.asarray(condition)
    if condition.size != 1:
        raise errors.InvalidArgumentError(None, None, f"the condition of Assert must be a "
                                          f"scalar, got shape {list(condition.shape)}")
    if not condition.reshape(-1)[0]:
        details = " ".join(f"[{format_value(item, summarize)}]" for item in data)
        raise errors.InvalidArgumentError(None, None, f"assertion failed: {details}")
    return ()


@register_kernel("StringFormat")
def string_format(*inputs, template, placeholder, summarize):
    pieces = template.split(placeholder)
    if len(pieces) != len(inputs) + 1:
        raise errors.InvalidArgumentError(None, None, f"the template has {len(pieces) - 1} "
                                          f"placeholders for {len(inputs)} inputs")
    text = [pieces[0]]
    for value, piece in zip(inputs, pieces[1:]):
        text.append(format_value(value, summarize, quote_strings=True))
        text.append(piece)
    return np.array("".join(text).encode("utf-8"), dtype=object)


@register_kernel("PrintV2")
def print_v2(text, *, output_stream, end):
    try:
        output_streams.write(output_stream, _as_text(np.asarray(text)[()]) + end)
    except KeyError:
        raise errors.InvalidArgumentError(None, None, f"unknown output stream "
                                          f"{output_stream!r} (a stream handed to tf.print in "
                                          "another process?)") from None
    return ()


class _PrintCount:
    """How many times one Print op has printed (for its first_n)."""

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()

    def take(self, first_n):
        with self.lock:
            self.count += 1
            return first_n < 0 or self.count <= first_n


def _print_summary(value, summarize):
    """TF 1.x Print's format: the first `summarize` values in row-major order, nested in the
    brackets of the rows they belong to ("[[0 1 2...]...]"), all of them when summarize < 0."""
    value = np.asarray(value)
    flat = value.reshape(-1)
    limit = flat.size if summarize < 0 else summarize
    if value.ndim <= 1:
        shown = " ".join(_element_text(item) for item in flat[:limit])
        return f"[{shown}{'...' if flat.size > limit else ''}]"
    taken = [0]  # how many values are printed so far

    def rows(dim):
        text = ""
        if dim == value.ndim - 1:
            for i in range(value.shape[dim]):
                if taken[0] >= limit:
                    return text + "..."
                text += (" " if i else "") + _element_text(flat[taken[0]])
                taken[0] += 1
            return text
        for _ in range(value.shape[dim]):
            opened = taken[0] < limit
            inner = rows(dim + 1) if opened else ""
            text += f"[{inner}]" if opened else ""
        return text

    return f"[{rows(0)}{'...' if flat.size > limit else ''}]"


def _element_text(item):
    if isinstance(item, (bytes, str)):
        return _as_text(item)
    if isinstance(item, np.bool_):
        return str(int(item))
    if isinstance(item, np.floating):
        return _format_float(item)
    return str(item)


@register_kernel("Print", resource="resource", resource_factory=lambda attrs: _PrintCount(),
                 forwards_input=True)
def print_(counter, x, *data, message, first_n, summarize):
    if counter.take(first_n):
        output_streams.write("stderr", message + "".join(_print_summary(d, summarize)
                                                         for d in data) + "\n")
    return x
