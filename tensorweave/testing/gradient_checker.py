"""The shared numeric gradient checker: symbolic gradients against central finite differences.

Two faces over one idea (HIPS/autograd's `check_grads` and TF's `gradient_checker`):

- `compute_gradient` / `compute_gradient_error` have the semantics of TF 1.x
  `tf.test.compute_gradient(_error)`: full Jacobians with one row per element of x and one column
  per element of y, computed in the default session (or a temporary one).
- `check_gradients(fn, inputs, order)` is what the op tests use: it builds `fn` in a fresh graph,
  reduces its outputs to the scalar sum(y * w) with fixed random weights w, and compares
  tf.gradients of that scalar with central differences, in float64 by default. `order=2`
  differentiates the symbolic gradient again (through sum(grad * v), v random), which checks that
  gradient rules are themselves differentiable graphs.

Only the public graph/session API is used, so what passes here passes for users.
"""
import numpy as np

import tensorweave as tf

# dtype name -> (finite-difference step, atol, rtol). float64 leaves room for rounding in the
# difference quotient (~eps/delta) and its truncation error (~delta^2); the float32/float16 rows
# are for checking an op directly in that precision, which is coarse by nature.
TOLERANCES = {
    "float64": (1e-5, 1e-6, 1e-5),
    "float32": (1e-2, 3e-2, 3e-2),
    "float16": (1e-1, 3e-1, 3e-1),
}


def default_tolerance(dtype):
    """(delta, atol, rtol) for gradients checked in `dtype`."""
    name = tf.as_dtype(dtype).name
    if name not in TOLERANCES:
        raise ValueError(f"gradient checks need a floating-point dtype, got {name}")
    return TOLERANCES[name]


# --- tf.test.compute_gradient -------------------------------------------------------------------
def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                     extra_feed_dict=None):
    """(theoretical, numerical) Jacobians of y with respect to x, each of shape [x size, y size].

    `x` may be a list of tensors (with `x_shape` and `x_init_value` lists to match); the result
    is then a list of (theoretical, numerical) pairs. Values of x are fed, so x may be any tensor
    (a placeholder, a constant, an intermediate). Runs in the default session if it owns y's
    graph, otherwise in a temporary session.
    """
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    shapes = list(x_shape) if isinstance(x, (list, tuple)) else [x_shape]
    if len(shapes) != len(xs):
        raise ValueError(f"compute_gradient: {len(xs)} tensors in x but {len(shapes)} shapes")
    if x_init_value is None:
        inits = [None] * len(xs)
    else:
        inits = list(x_init_value) if isinstance(x, (list, tuple)) else [x_init_value]
    xs = [tf.convert_to_tensor(t) for t in xs]
    y = tf.convert_to_tensor(y)
    if not y.dtype.is_floating:
        raise TypeError(f"compute_gradient: y ({y.name}) must be floating point, got "
                        f"{y.dtype.name}")
    rng = np.random.default_rng(0)
    values = []
    for tensor, shape, init in zip(xs, shapes, inits):
        if not tensor.dtype.is_floating:
            raise TypeError(f"compute_gradient: x {tensor.name} must be floating point, got "
                            f"{tensor.dtype.name}")
        if init is None:
            init = rng.random(tuple(shape))
        init = np.asarray(init).astype(tensor.dtype.np_dtype)
        if init.shape != tuple(shape):
            raise ValueError(f"compute_gradient: x_init_value for {tensor.name} has shape "
                             f"{init.shape}, expected {tuple(shape)}")
        values.append(init)
    y_shape = tuple(y_shape)
    with _session_for(y.graph) as session:
        with y.graph.as_default():
            dy = tf.placeholder(y.dtype, y_shape, name="compute_gradient_dy")
            grads = tf.gradients(y, xs, grad_ys=dy)
        feeds = dict(extra_feed_dict or {})
        feeds.update(zip(xs, values))
        y_size = int(np.prod(y_shape, dtype=np.int64))
        theoretical = [np.zeros((v.size, y_size)) for v in values]
        for col in range(y_size):
            one_hot = np.zeros(y_size, dtype=y.dtype.np_dtype)
            one_hot[col] = 1
            fetch = [g for g in grads if g is not None]
            got = iter(session.run(fetch, {**feeds, dy: one_hot.reshape(y_shape)}))
            for i, grad in enumerate(grads):
                if grad is not None:
                    theoretical[i][:, col] = _dense(next(got), values[i].shape).reshape(-1)
        numerical = []
        for i, (tensor, value) in enumerate(zip(xs, values)):
            jacobian = np.zeros((value.size, y_size))
            for row in range(value.size):
                plus, minus = value.copy(), value.copy()
                plus.flat[row] += delta
                minus.flat[row] -= delta
                y_plus = session.run(y, {**feeds, tensor: plus}).astype(np.float64)
                y_minus = session.run(y, {**feeds, tensor: minus}).astype(np.float64)
                jacobian[row] = (y_plus - y_minus).reshape(-1) / (2 * delta)
            numerical.append(jacobian)
    pairs = list(zip(theoretical, numerical))
    return pairs if isinstance(x, (list, tuple)) else pairs[0]


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict)
    pairs = result if isinstance(result, list) else [result]
    error = 0.0
    for theoretical, numerical in pairs:
        if theoretical.size:
            error = max(error, float(np.max(np.abs(theoretical - numerical))))
    return error


class _session_for:  # noqa: N801 - used as a context manager, reads as a function
    """The default session when it runs `graph`; otherwise a temporary one, closed on exit."""

    def __init__(self, graph):
        self._graph = graph
        self._owned = None

    def __enter__(self):
        session = tf.get_default_session()
        if session is not None and session.graph is self._graph:
            return session
        self._owned = tf.Session(graph=self._graph)
        return self._owned

    def __exit__(self, *exc):
        if self._owned is not None:
            self._owned.close()
        return False


def _dense(value, shape):
    """A fetched gradient as a dense array (IndexedSlices values are summed into their rows)."""
    if hasattr(value, "indices") and hasattr(value, "values"):
        dense = np.zeros(shape, dtype=np.float64)
        np.add.at(dense, np.asarray(value.indices), np.asarray(value.values))
        return dense
    return np.asarray(value, dtype=np.float64)


# --- check_gradients: the op tests' checker -----------------------------------------------------
class GradientCheckError(AssertionError):
    pass


def check_gradients(fn, inputs, order=1, atol=None, rtol=None, delta=None, static_shapes=True,
                    seed=0, name=None):
    """Checks the symbolic gradients of `fn` against central differences, up to `order` (1, 2).

    `inputs` are NumPy arrays; floating ones become placeholders (fully shaped when
    `static_shapes` is True, with an unknown first dimension when it is "partial", of unknown
    shape when False) and are differentiated, the others become constants (indices, labels,
    masks). `fn(*tensors)` returns a tensor or a list of them;
    non-float outputs are ignored. Also checks that each gradient has its input's dtype and a
    static shape compatible with it. Raises GradientCheckError naming the input and the order.
    Returns the largest absolute error seen.
    """
    if order not in (1, 2):
        raise ValueError(f"check_gradients: order must be 1 or 2, got {order}")
    arrays = [np.asarray(a) for a in inputs]
    diff = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    if not diff:
        raise ValueError("check_gradients: no floating-point input to differentiate")
    dtype = arrays[diff[0]].dtype
    default_delta, default_atol, default_rtol = default_tolerance(dtype)
    delta = default_delta if delta is None else delta
    atol = default_atol if atol is None else atol
    rtol = default_rtol if rtol is None else rtol
    label = name or getattr(fn, "__name__", "fn")
    rng = np.random.default_rng(seed)

    graph = tf.Graph()
    with graph.as_default():
        tensors = []
        for i, array in enumerate(arrays):
            if i in diff:
                shape = _placeholder_shape(array.shape, static_shapes)
                tensors.append(tf.placeholder(tf.as_dtype(array.dtype), shape, name=f"x{i}"))
            else:
                tensors.append(tf.constant(array, name=f"c{i}"))
        xs = [tensors[i] for i in diff]
        outputs = fn(*tensors)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        outputs = [tf.convert_to_tensor(t) for t in outputs]
        outputs = [t for t in outputs if t.dtype.is_floating]
        if not outputs:
            raise ValueError(f"check_gradients({label}): fn has no floating-point output")
        weights = [tf.placeholder(t.dtype, t.shape, name=f"w{k}") for k, t in enumerate(outputs)]
        loss = tf.add_n([tf.reduce_sum(t * w) for t, w in zip(outputs, weights)])
        grads = _densified(tf.gradients(loss, xs))
        _check_static(grads, xs, label, 1)
        target, checked = loss, grads
        directions = []
        if order == 2:
            directions = [tf.placeholder(x.dtype, x.shape, name=f"v{k}") for k, x in enumerate(xs)]
            terms = [tf.reduce_sum(g * v) for g, v in zip(grads, directions) if g is not None]
            if not terms:
                raise GradientCheckError(f"check_gradients({label}): no first-order gradient "
                                         "to differentiate again")
            target = tf.add_n(terms)
            checked = _densified(tf.gradients(target, xs))
            _check_static(checked, xs, label, 2)

    with tf.Session(graph=graph) as session:
        base = {x: arrays[i] for x, i in zip(xs, diff)}
        output_values = session.run(outputs, base)
        weight_values = [rng.standard_normal(np.shape(v)).astype(v.dtype) for v in output_values]
        extra = dict(zip(weights, weight_values))
        extra.update({v: rng.standard_normal(arrays[i].shape).astype(dtype)
                      for v, i in zip(directions, diff)})
        present = [g for g in checked if g is not None]
        symbolic_values = iter(session.run(present, {**base, **extra}))
        symbolic = [np.zeros(arrays[i].shape) if g is None else
                    np.asarray(next(symbolic_values), dtype=np.float64)
                    for g, i in zip(checked, diff)]
        for g, x, value in zip(checked, xs, symbolic):
            if g is not None and value.shape != tuple(base[x].shape):
                raise GradientCheckError(
                    f"check_gradients({label}), order {order}: gradient of {x.name} has shape "
                    f"{value.shape} at run time, expected {base[x].shape}")
        evaluate = session.make_callable(target, feed_list=xs + list(extra))
        extra_values = list(extra.values())
        worst = 0.0
        for k, (x, i) in enumerate(zip(xs, diff)):
            point = [base[t] for t in xs]
            numeric = np.zeros(arrays[i].shape)
            for flat_index in range(arrays[i].size):
                plus, minus = arrays[i].copy(), arrays[i].copy()
                plus.flat[flat_index] += delta
                minus.flat[flat_index] -= delta
                point[k] = plus
                f_plus = float(evaluate(*point, *extra_values))
                point[k] = minus
                f_minus = float(evaluate(*point, *extra_values))
                numeric.flat[flat_index] = (f_plus - f_minus) / (2 * delta)
            point[k] = base[x]
            error = np.abs(symbolic[k] - numeric)
            worst = max(worst, float(error.max()) if error.size else 0.0)
            bad = error > atol + rtol * np.abs(numeric)
            if bad.any():
                raise GradientCheckError(
                    f"check_gradients({label}), order {order}: gradient with respect to input "
                    f"{i} ({x.name}, shape {arrays[i].shape}) differs from central differences "
                    f"at {int(bad.sum())} of {bad.size} elements (max abs error {error.max():.3g},"
                    f" atol {atol}, rtol {rtol})\nsymbolic:\n{symbolic[k]}\nnumeric:\n{numeric}")
    return worst


def _placeholder_shape(shape, static_shapes):
    if static_shapes == "partial":  # the batch dimension unknown, as in [None, 784] inputs
        return (None,) + tuple(shape[1:]) if len(shape) else ()
    return tuple(shape) if static_shapes else None


def _densified(grads):
    return [g if g is None or isinstance(g, tf.Tensor) else tf.convert_to_tensor(g)
            for g in grads]


def _check_static(grads, xs, label, order):
    for grad, x in zip(grads, xs):
        if grad is None:
            continue
        if grad.dtype != x.dtype:
            raise GradientCheckError(f"check_gradients({label}), order {order}: gradient of "
                                     f"{x.name} has dtype {grad.dtype.name}, expected "
                                     f"{x.dtype.name}")
        if not grad.shape.is_compatible_with(x.shape):
            raise GradientCheckError(f"check_gradients({label}), order {order}: gradient of "
                                     f"{x.name} has static shape {grad.shape}, incompatible "
                                     f"with {x.shape}")
