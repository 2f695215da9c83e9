"""`tf.experimental.dispatch_for_*`: handlers that tensorweave's APIs call when an argument is
an ExtensionType value (extension_types.py), registered per API or for every elementwise API.

  dispatch_for_api(api, *signatures)          handler(*args) for `api` when its arguments
                                              match a signature ({parameter: type}; a Union
                                              matches any member). `api` must support dispatch:
                                              the elementwise math ops, tf.concat, tf.stack,
                                              tf.gather
  dispatch_for_unary_elementwise_apis(x_type) handler(api_func, x) for every unary elementwise
                                              op called with an x_type value
  dispatch_for_binary_elementwise_apis(x_type, y_type)
                                              handler(api_func, x, y), either operand matching
  dispatch_for_binary_elementwise_assert_apis(x_type, y_type)
                                              handler(assert_func, x, y) for
                                              tf.debugging.assert_equal and its kin
  unregister_dispatch_for(handler)            removes a handler registered by any of them
"""
import collections.abc
import inspect
import typing

_BY_API = {}       # api function -> [(signature dict, handler)]
_BY_NAME = {}      # "concat" / "stack" / "gather" -> [(signature dict, handler)]
_UNARY = []        # [(type, handler)]
_BINARY = []       # [(x type, y type, handler)]
_ASSERTS = []      # [(x type, y type, handler)] for tf.debugging.assert_equal and its kin
_COMPOSITE_APIS = ("concat", "stack", "gather")


def _types(annotation):
    if typing.get_origin(annotation) is typing.Union:
        return tuple(t for arg in typing.get_args(annotation) for t in _types(arg))
    return (annotation,)


def _is(value, kind):
    if typing.get_origin(kind) in (list, tuple, typing.List, typing.Sequence) or \
            typing.get_origin(kind) is collections.abc.Sequence:
        (item,) = typing.get_args(kind)[:1]
        return isinstance(value, (list, tuple)) and all(_is(v, item) for v in value)
    return isinstance(value, _types(kind))


def _matches(api, signature, args, kwargs):
    try:
        bound = inspect.signature(api).bind_partial(*args, **kwargs)
    except TypeError:
        return False
    return all(name in bound.arguments and _is(bound.arguments[name], kind)
               for name, kind in signature.items())


def dispatch_for_api(api, *signatures):
    """Decorator: the handler runs for calls of `api` whose arguments match a signature."""
    name = getattr(api, "__name__", "")
    elementwise = hasattr(api, "__wrapped__") and getattr(api, "_composite_arity", None)
    if not (elementwise or name in _COMPOSITE_APIS):
        raise ValueError(f"dispatch_for_api: {name or api!r} does not support dispatch (the "
                         f"elementwise ops and tf.{', tf.'.join(_COMPOSITE_APIS)} do)")
    parameters = inspect.signature(api).parameters
    for signature in signatures:
        unknown = set(signature) - set(parameters)
        if unknown:
            raise ValueError(f"dispatch_for_api: {name} has no parameters {sorted(unknown)}")

    def register(handler):
        if elementwise:
            _BY_API.setdefault(api, []).extend((dict(sig), handler) for sig in signatures)
        else:
            _BY_NAME.setdefault(name, []).extend((dict(sig), handler, api)
                                                 for sig in signatures)
        return handler
    return register


def dispatch_for_unary_elementwise_apis(x_type):
    def register(handler):
        _UNARY.append((x_type, handler))
        return handler
    return register


def dispatch_for_binary_elementwise_apis(x_type, y_type):
    def register(handler):
        _BINARY.append((x_type, y_type, handler))
        return handler
    return register


def dispatch_for_binary_elementwise_assert_apis(x_type, y_type):
    """handler(assert_func, x, y) for tf.debugging.assert_equal, assert_none_equal,
    assert_less(_equal) and assert_greater(_equal) called with these operand types."""
    def register(handler):
        _ASSERTS.append((x_type, y_type, handler))
        return handler
    return register


def binary_assert(assert_api, x, y, kwargs):
    for x_type, y_type, handler in _ASSERTS:
        if isinstance(x, _types(x_type)) and isinstance(y, _types(y_type)):
            return handler(assert_api, x, y)
    raise TypeError(f"{assert_api.__name__}: no dispatch handler for operands "
                    f"({type(x).__name__}, {type(y).__name__}): register one with "
                    "tf.experimental.dispatch_for_binary_elementwise_assert_apis")


def unregister_dispatch_for(dispatch_target):
    """Removes `dispatch_target` from every registry; ValueError if it was never registered."""
    found = False
    for table in list(_BY_API.values()) + list(_BY_NAME.values()):
        kept = [entry for entry in table if entry[1] is not dispatch_target]
        found |= len(kept) != len(table)
        table[:] = kept
    for table in (_UNARY, _BINARY, _ASSERTS):
        kept = [entry for entry in table if entry[-1] is not dispatch_target]
        found |= len(kept) != len(table)
        table[:] = kept
    if not found:
        raise ValueError(f"unregister_dispatch_for: {dispatch_target!r} was not registered")


def elementwise(op, operands, name):
    """An elementwise op on operands holding an ExtensionType value (the composite tensor
    hook): the handler registered for its API, else for its arity; TypeError if none."""
    api = getattr(op, "api", None)
    for signature, handler in _BY_API.get(api, ()):
        if _matches(api, signature, operands, {}):
            return handler(*operands)
    if len(operands) == 1:
        for x_type, handler in _UNARY:
            if isinstance(operands[0], _types(x_type)):
                return handler(api or op, operands[0])
    if len(operands) == 2:
        x, y = operands
        for x_type, y_type, handler in _BINARY:
            if isinstance(x, _types(x_type)) and isinstance(y, _types(y_type)):
                return handler(api or op, x, y)
    kinds = ", ".join(type(o).__name__ for o in operands)
    raise TypeError(f"tf.{getattr(api, '__name__', 'op')}: no dispatch handler for operands "
                    f"({kinds}): register one with tf.experimental.dispatch_for_api or "
                    "dispatch_for_*_elementwise_apis")


def by_name(function_name, args, kwargs):
    """tf.concat / tf.stack / tf.gather with an ExtensionType argument."""
    for signature, handler, api in _BY_NAME.get(function_name, ()):
        if _matches(api, signature, args, kwargs):
            return handler(*args, **kwargs)
    raise TypeError(f"tf.{function_name} has no dispatch handler for these ExtensionType "
                    "arguments (register one with tf.experimental.dispatch_for_api)")
