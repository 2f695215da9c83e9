"""tf.flags.tf_decorator: decorated functions keep their name, docs and signature, and the
chain of decorators unwraps to the original function; rewrap swaps the target."""
import inspect

import tensorweave as tf

tfd = tf.flags.tf_decorator


def _logged(calls):
    def decorator(fn):
        def wrapper(*args, **kwargs):
            calls.append(fn.__name__)
            return wrapper.__wrapped__(*args, **kwargs)
        return tfd.make_decorator(fn, wrapper, "logged")
    return decorator


def test_make_decorator_keeps_identity_and_calls_through():
    calls = []

    def scale(x, factor=2, *, bias=0):
        """Scales x."""
        return x * factor + bias

    wrapped = _logged(calls)(scale)
    assert wrapped(3, bias=1) == 7 and calls == ["scale"]
    assert wrapped.__name__ == "scale" and wrapped.__doc__ == "Scales x."
    assert str(inspect.signature(wrapped)) == "(x, factor=2, *, bias=0)"
    decorators, target = tfd.unwrap(wrapped)
    assert target is scale and [d.decorator_name for d in decorators] == ["logged"]


def test_unwrap_sees_through_two_decorators_outermost_first():
    def f(a):
        return a + 1

    inner = tfd.make_decorator(f, lambda a: f(a), "inner")
    outer = tfd.make_decorator(inner, lambda a: inner(a) * 10, "outer")
    decorators, target = tfd.unwrap(outer)
    assert [d.decorator_name for d in decorators] == ["outer", "inner"]
    assert target is f and outer(1) == 20
    assert tfd.unwrap(f) == ([], f)


def test_rewrap_replaces_the_target_inside_the_chain():
    calls = []

    def old(x):
        return x + 1

    def new(x):
        return x + 100

    wrapped = _logged(calls)(old)
    assert tfd.rewrap(wrapped, old, new) is wrapped
    assert wrapped(1) == 101
    assert tfd.unwrap(wrapped)[1] is new
    assert tfd.rewrap(old, old, new) is new


def test_tfdecorator_object_and_fullargspec_to_signature():
    def g(a, b=3, *rest, c, d=4, **kw):
        return a

    dec = tfd.TFDecorator("mine", g, "Docs.")
    assert dec(5, c=1) == 5 and dec.decorator_name == "mine" and dec.__doc__ == "Docs."
    assert dec.decorated_target is g and dec.__name__ == "g"
    spec = inspect.getfullargspec(g)
    assert tfd.fullargspec_to_signature(spec) == inspect.signature(g)
    assert tf.app.flags.tf_decorator is tfd and tfd.inspect is inspect
