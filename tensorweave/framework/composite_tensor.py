"""CompositeTensor: a value made of several graph tensors (tf.RaggedTensor is one).

The layers below the composite's own package meet it only through this interface: Session.run
fetches and feeds its component tensors, and the elementwise math wrappers hand an operation
on a composite operand to `dispatch_elementwise`, which asks the composite's class to apply it.
"""
import functools


class CompositeTensor:
    """Subclasses define how their parts are fetched, fed and computed on elementwise."""

    def _fetch_components(self):
        """The graph tensors that a fetch of this value runs, in a fixed order."""
        raise NotImplementedError(type(self).__name__ + "._fetch_components")

    def _value_from_fetched(self, arrays):
        """The Python value (e.g. RaggedTensorValue) built from the fetched component arrays."""
        raise NotImplementedError(type(self).__name__ + "._value_from_fetched")

    def _feed_components(self, value):
        """[(component tensor, value part)] for feeding `value` in place of this composite."""
        raise NotImplementedError(type(self).__name__ + "._feed_components")

    def _reduce(self, kind, axis, keepdims, name):
        """The reduction `kind` ("Sum", "Mean", "Max", "Min", "Prod", "All", "Any") of this
        value over `axis` (None: all of it)."""
        raise TypeError(f"{type(self).__name__} does not support tf.reduce_{kind.lower()}")

    @classmethod
    def _dispatch(cls, function_name, args, kwargs):
        """tf.<function_name>(*args, **kwargs) for arguments holding values of this class."""
        raise TypeError(f"tf.{function_name} does not take a {cls.__name__}")

    @classmethod
    def _binary_assert(cls, assert_api, x, y, kwargs):
        """assert_api(x, y, **kwargs) (tf.debugging.assert_equal, ...) with an operand of
        this class."""
        raise TypeError(f"{assert_api.__name__} does not take a {cls.__name__}")

    @classmethod
    def _elementwise(cls, op, operands, name):
        """Applies the elementwise `op(*tensors, name=name)` to operands of which at least one
        is of this class; NotImplemented when it cannot."""
        return NotImplemented


def dispatch(function_name, values, args, kwargs):
    """`function_name` (tf.concat, tf.stack, tf.gather) applied by the class of the first
    composite among `values`, or NotImplemented when there is none."""
    for value in values:
        if isinstance(value, CompositeTensor):
            return type(value)._dispatch(function_name, args, kwargs)
    return NotImplemented


def dispatch_binary_assert(assert_api, x, y, kwargs):
    """A binary assertion on a composite operand, by the first composite's class; NotImplemented
    when neither operand is one."""
    for operand in (x, y):
        if isinstance(operand, CompositeTensor):
            return type(operand)._binary_assert(assert_api, x, y, kwargs)
    return NotImplemented


def dispatch_elementwise(op, operands, name=None):
    """op applied by the first composite operand's class, or NotImplemented when no operand is
    a composite (the caller then builds the plain op)."""
    for operand in operands:
        if isinstance(operand, CompositeTensor):
            return type(operand)._elementwise(op, operands, name)
    return NotImplemented


def dispatches_composites(arity):
    """Decorates an elementwise op wrapper whose first `arity` arguments are its operands: a
    call with a composite operand is handed to `dispatch_elementwise`, the other arguments
    (dtype, name, ...) kept."""
    def wrap(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            operands = args[:arity]
            if not any(isinstance(operand, CompositeTensor) for operand in operands):
                return function(*args, **kwargs)
            rest = args[arity:]
            options = {key: value for key, value in kwargs.items() if key != "name"}

            def op(*tensors, name=None):
                return function(*tensors, *rest, name=name, **options)
            op.api = wrapper  # the public function called, for per-API dispatch handlers
            return dispatch_elementwise(op, operands, kwargs.get("name"))
        wrapper._composite_arity = arity
        return wrapper
    return wrap
