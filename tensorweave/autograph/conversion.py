"""Converting one Python function: its source is parsed, rewritten (transformer.py) and
compiled into a new function with the same globals, defaults and closure values.

What is never converted: functions marked with do_not_convert, functions of tensorweave
itself, of NumPy and of the standard library or any installed package (their control flow
is not about tensors), builtins, lambdas (their source is not a statement), and functions
whose source cannot be read (the REPL, exec'd code): those run as they are, with a warning
at verbosity >= 1. A converted function is cached on the original.

Closure variables are copied when the function is converted: a converted closure sees the
values its cells held then (as TF's autograph does).
"""
import ast
import inspect
import os
import sys
import sysconfig
import textwrap
import threading

from tensorweave.autograph.transformer import AG, ControlFlowTransformer
from tensorweave.platform.tf_logging import get_logger

_DO_NOT_CONVERT = "__autograph_do_not_convert__"
_CONVERTED = "__autograph_converted__"
_lock = threading.Lock()
_settings = {"verbosity": 0}
_SKIPPED_ROOTS = tuple(os.path.normcase(os.path.abspath(p)) + os.sep for p in {
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
    sysconfig.get_paths()["platlib"], os.path.dirname(os.path.dirname(__file__))})


def set_verbosity(level, alsologtostdout=False):
    _settings["verbosity"] = int(level)
    _settings["stdout"] = bool(alsologtostdout)


def _log(level, message):
    if _settings["verbosity"] >= level:
        stream = sys.stdout if _settings.get("stdout") else sys.stderr
        print(f"autograph: {message}", file=stream)  # noqa: T201


def mark_do_not_convert(func):
    try:
        setattr(func, _DO_NOT_CONVERT, True)
    except AttributeError:
        pass
    return func


def _convertible(func):
    if not inspect.isfunction(func) or getattr(func, _DO_NOT_CONVERT, False):
        return False
    if func.__name__ == "<lambda>" or getattr(func, "__module__", "") in ("builtins",):
        return False
    path = inspect.getsourcefile(func) or ""
    return not os.path.normcase(os.path.abspath(path)).startswith(_SKIPPED_ROOTS) if path \
        else False


def transformed_source(func):
    """(module AST of the factory, the function's name) for `func`."""
    source = textwrap.dedent(inspect.getsource(func))
    tree = ast.parse(source)
    ast.increment_lineno(tree, func.__code__.co_firstlineno - 1)  # tracebacks name real lines
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise ValueError(f"autograph: {func.__qualname__} is not a plain function definition")
    node.decorator_list = []
    ControlFlowTransformer(node).visit(node)
    freevars = list(func.__code__.co_freevars)
    factory = ast.FunctionDef(
        name="autograph_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(a) for a in [AG, *freevars]],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[node, ast.Return(ast.Name(node.name, ast.Load()))], decorator_list=[],
        returns=None, **({"type_params": []} if "type_params" in ast.FunctionDef._fields
                         else {}))
    module = ast.Module(body=[factory], type_ignores=[])
    return ast.fix_missing_locations(module), node.name


def _build(func):
    from tensorweave.autograph import operators
    module, name = transformed_source(func)
    code = compile(module, inspect.getsourcefile(func) or "<autograph>", "exec")
    namespace = {}
    exec(code, func.__globals__, namespace)  # noqa: S102 - the user's own function, rewritten
    cells = [cell.cell_contents for cell in (func.__closure__ or ())]
    converted = namespace["autograph_factory__"](operators, *cells)
    converted.__defaults__ = func.__defaults__
    converted.__kwdefaults__ = func.__kwdefaults__
    converted.__doc__ = func.__doc__
    setattr(converted, _DO_NOT_CONVERT, True)  # already converted: never twice
    return converted


def convert(func):
    """`func` converted, or `func` itself when it is not to be (see the module docstring)."""
    if not _convertible(func):
        return func
    cached = func.__dict__.get(_CONVERTED)
    if cached is not None:
        return cached
    with _lock:
        try:
            converted = _build(func)
        except (OSError, TypeError, SyntaxError, ValueError) as error:
            # As TF, a warning: a tensor `if` in it will fail as a Python bool.
            get_logger().warning(f"AutoGraph could not transform {func.__qualname__} and will "
                                 f"run it as-is ({error})")
            converted = func
        func.__dict__[_CONVERTED] = converted
    return converted


def to_code(func):
    """The source of `func` as converted (the factory that binds ag__ and its closure)."""
    module, _ = transformed_source(func)
    return ast.unparse(module)
