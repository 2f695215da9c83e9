"""The table machinery shared by the op test modules.

A row (`OpCase`) is: how to build the op from tensors, an independent NumPy reference, how to
draw inputs (the domain), the dtypes to run it in, the tolerance, and the gradient order to check
numerically (in float64, with tensorweave.testing.gradient_checker). `run_case` builds the row
in a fresh graph (inputs as fully shaped placeholders, or as placeholders of unknown shape),
checks that every op type the row claims is really in the graph, runs it, and compares values,
output dtypes and static shapes against the runtime shapes.
"""
import zlib
from dataclasses import dataclass, field

import numpy as np

import tensorweave as tf
from tensorweave.ops import gradients as gradients_lib
from tensorweave.testing import gradient_checker

# How a row's inputs are fed: fully shaped placeholders, placeholders with an unknown first
# (batch) dimension, placeholders of unknown shape.
SHAPE_MODES = ("static", "partial", "unknown")
# dtype name -> (rtol, atol) for forward values compared with a float64 reference.
VALUE_TOLERANCES = {"float16": (2e-3, 2e-3), "float32": (2e-5, 1e-5), "float64": (1e-10, 1e-12)}


# --- input domains -------------------------------------------------------------------------------
class Floats:
    """Uniform values in [lo, hi) of the row's dtype (integers in that range for integer dtypes),
    kept at least `margin` away from each point in `avoid` (kinks, poles, rounding ties)."""

    def __init__(self, shape, lo=-2.0, hi=2.0, avoid=(), margin=0.1, dtype=None):
        self.shape, self.lo, self.hi = tuple(shape), lo, hi
        self.avoid, self.margin, self.dtype = tuple(avoid), margin, dtype

    def __call__(self, rng, dtype):
        dtype = np.dtype(self.dtype or dtype)
        if dtype.kind in "iu":
            return rng.integers(int(self.lo), int(self.hi), size=self.shape).astype(dtype)
        if dtype.kind == "b":
            return rng.random(self.shape) < 0.5
        values = rng.uniform(self.lo, self.hi, size=self.shape)
        for point in self.avoid:
            close = np.abs(values - point) < self.margin
            values[close] = point + np.where(values[close] >= point, 1, -1) * (
                self.margin + rng.uniform(0, self.margin, size=int(close.sum())))
        return values.astype(dtype)


class Ints:
    """Integers in [lo, hi) of a fixed dtype (indices, labels, segment ids)."""

    def __init__(self, shape, lo, hi, dtype=np.int32):
        self.shape, self.lo, self.hi, self.dtype = tuple(shape), lo, hi, np.dtype(dtype)

    def __call__(self, rng, dtype):
        return rng.integers(self.lo, self.hi, size=self.shape).astype(self.dtype)


class Bools:
    def __init__(self, shape):
        self.shape = tuple(shape)

    def __call__(self, rng, dtype):
        return rng.random(self.shape) < 0.5


class Grid:
    """Small integers stored in the row's dtype: ties and equal elements do occur."""

    def __init__(self, shape, lo=-2, hi=3):
        self.shape, self.lo, self.hi = tuple(shape), lo, hi

    def __call__(self, rng, dtype):
        return rng.integers(self.lo, self.hi, size=self.shape).astype(dtype)


class Permutation:
    def __init__(self, size, dtype=None):
        self.size, self.dtype = size, dtype

    def __call__(self, rng, dtype):
        return rng.permutation(self.size).astype(self.dtype or dtype)


class Fixed:
    """A fixed value (cast to the row's dtype unless `dtype` is given)."""

    def __init__(self, value, dtype=None):
        self.value, self.dtype = np.asarray(value), dtype

    def __call__(self, rng, dtype):
        return self.value.astype(self.dtype or dtype)


FLOATS = (np.float32, np.float64)
ALL_FLOATS = (np.float16, np.float32, np.float64)
INTS = (np.int32, np.int64)
REALS = FLOATS + INTS


@dataclass
class OpCase:
    name: str
    op_types: frozenset
    build: object                 # fn(*tensors) -> Tensor | list of Tensors
    reference: object             # fn(*arrays) -> array | list of arrays
    inputs: tuple                 # domains, each fn(rng, dtype) -> array; or one fn -> arrays
    dtypes: tuple = FLOATS
    out_dtype: object = None      # None: the row's dtype; a NumPy dtype; or fn(dtype) -> dtype;
                                  # or a list of those, one per output (values and indices)
    grad: int = 0                 # highest gradient order checked numerically (float64)
    grad_dynamic: bool = True     # also check gradients with inputs of unknown shape
    modes: tuple = SHAPE_MODES
    static_exact: bool = True     # with static inputs, the static output shape is fully known
    rtol: float = None            # loosens the dtype's default value tolerance
    atol: float = None
    grad_atol: float = None
    grad_rtol: float = None
    grad_delta: float = None      # finite-difference step (default: gradient_checker's)
    tags: dict = field(default_factory=dict)

    def __post_init__(self):
        self.op_types = frozenset(self.op_types)

    def __str__(self):
        return self.name


def covered(cases):
    return set().union(*(case.op_types for case in cases))


def gradient_checked(cases):
    return set().union(*(case.op_types for case in cases if case.grad))


def differentiable(op_types):
    return {t for t in op_types if gradients_lib.gradient_function(t) is not None}


def rng_for(name, dtype=None):
    return np.random.default_rng(zlib.crc32(f"{name}/{dtype}".encode()))


def draw(case, dtype):
    rng = rng_for(case.name, np.dtype(dtype).name)
    if callable(case.inputs):  # one function drawing related inputs together
        return list(case.inputs(rng, np.dtype(dtype)))
    return [domain(rng, np.dtype(dtype)) for domain in case.inputs]


def as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def expected_dtype(case, dtype, output=0):
    spec = case.out_dtype
    if isinstance(spec, list):
        spec = spec[output]
    if spec is None:
        return np.dtype(dtype)
    if callable(spec) and not isinstance(spec, type):
        return np.dtype(spec(np.dtype(dtype)))
    return np.dtype(spec)


def feed_tensors(arrays, mode):
    """Placeholders for the arrays, shaped as SHAPE_MODES says."""
    shapes = {"static": lambda a: a.shape, "unknown": lambda a: None,
              "partial": lambda a: (None,) + a.shape[1:] if a.ndim else ()}[mode]
    return [tf.placeholder(tf.as_dtype(a.dtype), shapes(a), name=f"input{i}")
            for i, a in enumerate(arrays)]


def upcast(array):
    array = np.asarray(array)
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def run_case(case, dtype, mode):
    arrays = draw(case, dtype)
    graph = tf.Graph()
    with graph.as_default():
        tensors = feed_tensors(arrays, mode)
        outputs = [tf.convert_to_tensor(t) for t in as_list(case.build(*tensors))]
    present = {op.type for op in graph.get_operations()}
    missing = case.op_types - present
    assert not missing, f"{case.name}: row claims {sorted(missing)} but the graph has none"
    with tf.Session(graph=graph) as session:
        values = session.run(outputs, dict(zip(tensors, arrays)))
    expected = as_list(case.reference(*[upcast(a) for a in arrays]))
    assert len(expected) == len(values), f"{case.name}: {len(values)} outputs, reference has " \
                                         f"{len(expected)}"
    for k, (tensor, value, reference) in enumerate(zip(outputs, values, expected)):
        where = f"{case.name}[{np.dtype(dtype).name}, {mode}] output {k}"
        want_dtype = expected_dtype(case, dtype, k)
        # A fetched string scalar is bytes; as an array it is object, like its tensor.
        value = np.asarray(value, dtype=object if want_dtype == object else None)
        assert tensor.dtype.np_dtype == want_dtype, \
            f"{where}: static dtype {tensor.dtype.name}, expected {want_dtype}"
        assert value.dtype == want_dtype, f"{where}: kernel returned {value.dtype}, " \
                                          f"expected {want_dtype}"
        assert tensor.shape.is_compatible_with(value.shape), \
            f"{where}: static shape {tensor.shape} vs runtime shape {value.shape}"
        if mode == "static" and case.static_exact:
            assert tensor.shape.is_fully_defined(), \
                f"{where}: static shape {tensor.shape} not fully known from static inputs"
        reference = np.asarray(reference)
        assert value.shape == reference.shape, \
            f"{where}: shape {value.shape}, reference {reference.shape}"
        compare_values(value, reference, want_dtype, case.rtol, case.atol, where)


def compare_values(value, reference, dtype, rtol, atol, where):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        default_rtol, default_atol = VALUE_TOLERANCES[dtype.name]
        # A row may loosen the dtype's tolerance (never tighten it: float16 stays coarse).
        np.testing.assert_allclose(value.astype(np.float64), reference.astype(np.float64),
                                   rtol=max(default_rtol, rtol or 0),
                                   atol=max(default_atol, atol or 0), err_msg=where)
    else:
        np.testing.assert_array_equal(value, reference.astype(dtype), err_msg=where)


def check_case_gradient(case, order, static_shapes=True):
    arrays = draw(case, np.float64)
    gradient_checker.check_gradients(case.build, arrays, order=order, atol=case.grad_atol,
                                     rtol=case.grad_rtol, delta=case.grad_delta,
                                     static_shapes=static_shapes,
                                     name=case.name)


# --- pytest parameter lists ----------------------------------------------------------------------
def value_params(cases):
    import pytest
    return [pytest.param(case, np.dtype(dtype), mode,
                         id=f"{case.name}-{np.dtype(dtype).name}-{mode}")
            for case in cases for dtype in case.dtypes for mode in case.modes]


def gradient_params(cases):
    import pytest
    params = []
    for case in cases:
        for order in range(1, case.grad + 1):
            params.append(pytest.param(case, order, True, id=f"{case.name}-order{order}"))
        if case.grad and case.grad_dynamic and "partial" in case.modes:
            params.append(pytest.param(case, 1, "partial",
                                       id=f"{case.name}-order1-partial-shape"))
        if case.grad and case.grad_dynamic and "unknown" in case.modes:
            params.append(pytest.param(case, 1, False, id=f"{case.name}-order1-unknown-shape"))
    return params


def check_gradient_rows_cover(module_covered, cases, extra_checked=()):
    """Every differentiable op a module covers has a numeric gradient row (or an extra test)."""
    unchecked = differentiable(module_covered) - gradient_checked(cases) - set(extra_checked)
    assert not unchecked, f"differentiable ops without a numeric gradient row: {sorted(unchecked)}"


# --- kernels compute in their inputs' precision (NEP 50) -----------------------------------------
class TrackedArray(np.ndarray):
    """An array recording the dtype of every ufunc result computed from it (class-wide log)."""

    log = []

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        plain = [np.asarray(x) if isinstance(x, TrackedArray) else x for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, TrackedArray) else o
                                  for o in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        for item in result if isinstance(result, tuple) else (result,):
            if isinstance(item, (np.ndarray, np.generic)):
                TrackedArray.log.append((ufunc.__name__, np.asarray(item).dtype))
        if out is not None:
            return out[0] if len(out) == 1 else out
        if isinstance(result, (np.ndarray, np.generic)):
            return np.asarray(result).view(TrackedArray)
        return result


# Ops whose purpose is to change the float width.
WIDTH_CHANGING_OPS = {"Cast"}


class _NumpyKeepingSubclasses:
    """NumPy as the kernels see it during the check, except that asarray keeps the tracked
    subclass (otherwise a kernel's first np.asarray would hide all its arithmetic)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def asarray(value, dtype=None, **kwargs):
        return np.asanyarray(value, dtype=dtype, **kwargs)


class _kernels_see_tracked_arrays:  # noqa: N801 - a context manager read as a phrase
    def __enter__(self):
        import importlib
        import pkgutil
        import tensorweave.kernels as kernels_pkg
        self._patched = []
        for info in pkgutil.iter_modules(kernels_pkg.__path__):
            module = importlib.import_module(f"tensorweave.kernels.{info.name}")
            if getattr(module, "np", None) is np:
                self._patched.append(module)
                module.np = _NumpyKeepingSubclasses()
        return self

    def __exit__(self, *exc):
        for module in self._patched:
            module.np = np
        return False


def check_kernel_precision(case, dtype):
    """Runs each kernel of the row's graph on tracked copies of its real inputs and fails if
    a floating-point temporary is wider than the kernel's widest floating-point input (float32
    accumulation of float16 inputs allowed)."""
    from tensorweave.kernels import registry as kernel_registry
    arrays = draw(case, dtype)
    graph = tf.Graph()
    with graph.as_default():
        tensors = feed_tensors(arrays, "static")
        case.build(*tensors)
    ops = [op for op in graph.get_operations() if op.type not in WIDTH_CHANGING_OPS and
           kernel_registry.get_kernel(op.type) is not None and
           kernel_registry.get_kernel(op.type).resource is None and op.inputs]
    with tf.Session(graph=graph) as session:
        values = session.run([[t for t in op.inputs] for op in ops], dict(zip(tensors, arrays)))
    for op, inputs in zip(ops, values):
        widths = [np.asarray(v).dtype.itemsize for v in inputs if np.asarray(v).dtype.kind == "f"]
        if not widths:
            continue
        kernel = kernel_registry.get_kernel(op.type)
        TrackedArray.log = []
        with _kernels_see_tracked_arrays():
            kernel.compute(*[np.asarray(v).view(TrackedArray) for v in inputs],
                           **{name: op.get_attr(name) for name in kernel.attr_names})
        # float16 may accumulate in float32 (np.mean does, for accuracy); nothing may use
        # float64 unless an input is float64.
        limit = max(max(widths), 4)
        wider = [(name, str(dt)) for name, dt in TrackedArray.log
                 if dt.kind == "f" and dt.itemsize > limit]
        assert not wider, f"{case.name}: kernel of {op.type} computed in a wider float: {wider}"


def precision_params(cases):
    import pytest
    return [pytest.param(case, np.dtype(dtype), id=f"{case.name}-{np.dtype(dtype).name}")
            for case in cases for dtype in case.dtypes if np.dtype(dtype) in
            (np.dtype(np.float16), np.dtype(np.float32))]
