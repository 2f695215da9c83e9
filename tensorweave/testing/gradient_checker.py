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
from tensorweave.test import compute_gradient, compute_gradient_error  # noqa: F401 - re-exported

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


# --- check_gradients: the op tests' checker -----------------------------------------------------
class GradientCheckError(AssertionError):
    pass


def check_gradients(fn, inputs, order=1, atol=None, rtol=None, delta=None, static_shapes=True,
                    seed=0, name=None):
    """Checks the symbolic gradients of `fn` against central differences, up to `order` (1, 2).

    `inputs` are NumPy arrays; floating ones become placeholders (fully shaped when
    `static_shapes` is True, with an unknown first dimension when it is "partial", of unknown
    shape when False) and are differentiated, the others become constants (indices, labels,
    masks). `fn(*tensors)` returns a tensor or a list of them; non-float outputs are ignored.
    Also checks that each gradient has its input's dtype and a static shape compatible with
    the input's value. Raises GradientCheckError naming the input and the order; returns the
    largest absolute error seen.
    """
    if order not in (1, 2):
        raise ValueError(f"check_gradients: order must be 1 or 2, got {order}")
    arrays = [np.asarray(a) for a in inputs]
    diff = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    if not diff:
        raise ValueError("check_gradients: no floating-point input to differentiate")
    default_delta, default_atol, default_rtol = default_tolerance(arrays[diff[0]].dtype)
    delta = default_delta if delta is None else delta
    atol = default_atol if atol is None else atol
    rtol = default_rtol if rtol is None else rtol
    label = f"check_gradients({name or getattr(fn, '__name__', 'fn')}), order {order}"
    graph = tf.Graph()
    with graph.as_default():
        problem = _GradientProblem(fn, arrays, diff, order, static_shapes, label)
    rng = np.random.default_rng(seed)
    with tf.Session(graph=graph) as session:
        symbolic, evaluate, extra_values = problem.symbolic(session, rng)
        worst = 0.0
        for k, i in enumerate(diff):
            numeric = _central_differences(evaluate, problem.point(), k, extra_values, delta)
            error = np.abs(symbolic[k] - numeric)
            worst = max(worst, float(error.max()) if error.size else 0.0)
            bad = error > atol + rtol * np.abs(numeric)
            if bad.any():
                raise GradientCheckError(
                    f"{label}: gradient with respect to input {i} ({problem.xs[k].name}, shape "
                    f"{arrays[i].shape}) differs from central differences at {int(bad.sum())} "
                    f"of {bad.size} elements (max abs error {error.max():.3g}, atol {atol}, "
                    f"rtol {rtol})\nsymbolic:\n{symbolic[k]}\nnumeric:\n{numeric}")
    return worst


class _GradientProblem:
    """The graph of one check: placeholders for the float inputs, the scalar target
    sum(y * w) (order 1) or sum(grad * v) (order 2), and the gradients of that target."""

    def __init__(self, fn, arrays, diff, order, static_shapes, label):
        self.arrays, self.diff, self.label = arrays, diff, label
        tensors = [tf.placeholder(tf.as_dtype(a.dtype), _placeholder_shape(a.shape, static_shapes),
                                  name=f"x{i}") if i in diff else tf.constant(a, name=f"c{i}")
                   for i, a in enumerate(arrays)]
        self.xs = [tensors[i] for i in diff]
        outputs = fn(*tensors)
        outputs = [tf.convert_to_tensor(t) for t in
                   (outputs if isinstance(outputs, (list, tuple)) else [outputs])]
        self.outputs = [t for t in outputs if t.dtype.is_floating]
        if not self.outputs:
            raise ValueError(f"{label}: fn has no floating-point output")
        self.weights = [tf.placeholder(t.dtype, t.shape, name=f"w{k}")
                        for k, t in enumerate(self.outputs)]
        self.target = tf.add_n([tf.reduce_sum(t * w) for t, w in zip(self.outputs, self.weights)])
        self.grads = self._gradients_of_target()
        self.directions = []
        if order == 2:
            self.directions = [tf.placeholder(x.dtype, x.shape, name=f"v{k}")
                               for k, x in enumerate(self.xs)]
            terms = [tf.reduce_sum(g * v) for g, v in zip(self.grads, self.directions)
                     if g is not None]
            if not terms:
                raise GradientCheckError(f"{label}: no first-order gradient to differentiate")
            self.target = tf.add_n(terms)
            self.grads = self._gradients_of_target()

    def _gradients_of_target(self):
        grads = [g if g is None or isinstance(g, tf.Tensor) else tf.convert_to_tensor(g)
                 for g in tf.gradients(self.target, self.xs)]
        for grad, x, i in zip(grads, self.xs, self.diff):
            if grad is None:
                continue
            if grad.dtype != x.dtype:
                raise GradientCheckError(f"{self.label}: gradient of {x.name} has dtype "
                                         f"{grad.dtype.name}, expected {x.dtype.name}")
            if not grad.shape.is_compatible_with(self.arrays[i].shape):
                raise GradientCheckError(f"{self.label}: gradient of {x.name} has static shape "
                                         f"{grad.shape}, incompatible with "
                                         f"{self.arrays[i].shape}")
        return grads

    def point(self):
        return [self.arrays[i] for i in self.diff]

    def symbolic(self, session, rng):
        """The symbolic gradients' values (float64, zeros where None), a callable evaluating
        the target at given x values, and the fixed weights/directions it needs."""
        base = dict(zip(self.xs, self.point()))
        output_values = session.run(self.outputs, base)
        extra = {w: rng.standard_normal(np.shape(v)).astype(v.dtype)
                 for w, v in zip(self.weights, output_values)}
        extra.update({v: rng.standard_normal(self.arrays[i].shape).astype(self.arrays[i].dtype)
                      for v, i in zip(self.directions, self.diff)})
        present = [g for g in self.grads if g is not None]
        values = iter(session.run(present, {**base, **extra}))
        symbolic = []
        for grad, x, i in zip(self.grads, self.xs, self.diff):
            if grad is None:
                symbolic.append(np.zeros(self.arrays[i].shape))
                continue
            value = np.asarray(next(values))
            if value.shape != self.arrays[i].shape or value.dtype != self.arrays[i].dtype:
                raise GradientCheckError(f"{self.label}: gradient of {x.name} is {value.dtype}"
                                         f"{list(value.shape)} at run time, expected "
                                         f"{self.arrays[i].dtype}{list(self.arrays[i].shape)}")
            symbolic.append(value.astype(np.float64))
        evaluate = session.make_callable(self.target, feed_list=self.xs + list(extra))
        return symbolic, evaluate, list(extra.values())


def _central_differences(evaluate, point, k, extra_values, delta):
    """d(target)/d(point[k]) by central differences, one element at a time."""
    point = list(point)
    base = point[k]
    numeric = np.zeros(base.shape)
    for flat_index in range(base.size):
        values = []
        for step in (delta, -delta):
            moved = base.copy()
            moved.flat[flat_index] += step
            point[k] = moved
            values.append(float(evaluate(*point, *extra_values)))
        numeric.flat[flat_index] = (values[0] - values[1]) / (2 * delta)
    return numeric


def _placeholder_shape(shape, static_shapes):
    if static_shapes == "partial":  # the batch dimension unknown, as in [None, 784] inputs
        return (None,) + tuple(shape[1:]) if len(shape) else ()
    return tuple(shape) if static_shapes else None
