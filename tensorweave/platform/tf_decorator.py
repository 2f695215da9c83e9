"""`tf_decorator` (visible as `tf.flags.tf_decorator`, as in TF 1.x): decorators that keep
the decorated function discoverable. A `TFDecorator` wraps a target function, keeps its
name, module and docstring, and records which decorator made it, so that documentation and
introspection (`unwrap`) see through any number of decorators to the original function."""
import inspect  # noqa: F401  (TF 1.x's tf_decorator exposes the module too)
from typing import Any, Dict  # noqa: F401


class TFDecorator:
    """A callable wrapping `target`, made by the decorator named `decorator_name`."""

    def __init__(self, decorator_name, target, decorator_doc="", decorator_argspec=None):
        self._decorated_target = target
        self._decorator_name = decorator_name
        self._decorator_doc = decorator_doc
        self._decorator_argspec = decorator_argspec
        if hasattr(target, "__name__"):
            self.__name__ = target.__name__
        if hasattr(target, "__qualname__"):
            self.__qualname__ = target.__qualname__
        if self._decorator_doc:
            self.__doc__ = self._decorator_doc
        elif getattr(target, "__doc__", None):
            self.__doc__ = target.__doc__
        else:
            self.__doc__ = ""

    def __get__(self, instance, owner):
        return self._decorated_target.__get__(instance, owner)

    def __call__(self, *args, **kwargs):
        return self._decorated_target(*args, **kwargs)

    @property
    def decorated_target(self):
        return self._decorated_target

    @decorated_target.setter
    def decorated_target(self, decorated_target):
        self._decorated_target = decorated_target

    @property
    def decorator_name(self):
        return self._decorator_name

    @property
    def decorator_doc(self):
        return self._decorator_doc

    @property
    def decorator_argspec(self):
        return self._decorator_argspec

    def __repr__(self):
        return f"<TFDecorator {self._decorator_name!r} of {self._decorated_target!r}>"


def fullargspec_to_signature(fullargspec):
    """An `inspect.Signature` equal to the given `inspect.FullArgSpec`."""
    params, defaults = [], list(fullargspec.defaults or ())
    n_plain = len(fullargspec.args) - len(defaults)
    for i, name in enumerate(fullargspec.args):
        default = defaults[i - n_plain] if i >= n_plain else inspect.Parameter.empty
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=default))
    if fullargspec.varargs:
        params.append(inspect.Parameter(fullargspec.varargs, inspect.Parameter.VAR_POSITIONAL))
    kwdefaults = fullargspec.kwonlydefaults or {}
    for name in fullargspec.kwonlyargs or ():
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        default=kwdefaults.get(name, inspect.Parameter.empty)))
    if fullargspec.varkw:
        params.append(inspect.Parameter(fullargspec.varkw, inspect.Parameter.VAR_KEYWORD))
    annotations = fullargspec.annotations or {}
    params = [p.replace(annotation=annotations[p.name]) if p.name in annotations else p
              for p in params]
    return inspect.Signature(params, return_annotation=annotations.get(
        "return", inspect.Signature.empty))


def make_decorator(target, decorator_func, decorator_name=None, decorator_doc="",
                   decorator_argspec=None):
    """Makes `decorator_func` (the wrapper a decorator returns) look like `target`: same
    name, module, docstring and signature, with `target` reachable through `unwrap`."""
    if decorator_name is None:
        decorator_name = inspect.currentframe().f_back.f_code.co_name
    decorator = TFDecorator(decorator_name, target, decorator_doc, decorator_argspec)
    setattr(decorator_func, "_tf_decorator", decorator)
    if hasattr(target, "__name__"):
        decorator_func.__name__ = target.__name__
    if hasattr(target, "__qualname__"):
        decorator_func.__qualname__ = target.__qualname__
    if hasattr(target, "__module__"):
        decorator_func.__module__ = target.__module__
    if hasattr(target, "__dict__"):
        for name, value in target.__dict__.items():
            if name not in decorator_func.__dict__:
                decorator_func.__dict__[name] = value
    decorator_func.__wrapped__ = target
    if decorator_argspec is not None:
        decorator_func.__signature__ = fullargspec_to_signature(decorator_argspec)
    elif callable(target):
        try:
            decorator_func.__signature__ = inspect.signature(target)
        except (TypeError, ValueError):
            pass
    decorator_func.__doc__ = decorator.__doc__
    return decorator_func


def unwrap(maybe_tf_decorator):
    """(decorators, target): the TFDecorators around a function, outermost first, and the
    function they decorate (the argument itself when it is not decorated)."""
    decorators, current = [], maybe_tf_decorator
    while True:
        if isinstance(current, TFDecorator):
            decorators.append(current)
        elif hasattr(current, "_tf_decorator"):
            decorators.append(getattr(current, "_tf_decorator"))
        else:
            break
        if not hasattr(decorators[-1], "decorated_target"):
            break
        current = decorators[-1].decorated_target
    return decorators, current


def rewrap(decorator_func, previous_target, new_target):
    """Replaces, inside the chain of decorators of `decorator_func`, the function
    `previous_target` by `new_target` (and `decorator_func` itself if it is the target)."""
    cur = decorator_func
    innermost = decorator_func
    target = None
    while _has_tf_decorator(cur):
        innermost = cur
        target = getattr(cur, "_tf_decorator")
        if target.decorated_target is previous_target:
            break
        cur = target.decorated_target
    if target is None:  # decorator_func is not decorated: it is the target itself
        if decorator_func is not previous_target:
            raise ValueError("rewrap: previous_target is not decorated by decorator_func")
        return new_target
    if target.decorated_target is not previous_target:
        raise ValueError("rewrap: previous_target is not in the decorator chain")
    target.decorated_target = new_target
    if getattr(innermost, "__wrapped__", None) is previous_target:
        innermost.__wrapped__ = new_target
    return decorator_func


def _has_tf_decorator(obj):
    return hasattr(obj, "_tf_decorator") and isinstance(getattr(obj, "_tf_decorator"),
                                                       TFDecorator)

