"""The optimizer update ops (Apply*) against NumPy references of one update, run for several
steps in float16/float32/float64: the variable and its slots after each step, the op's output,
and that no dtype changes (in the stored arrays, nor in the kernels' temporaries: NEP 50 lets
one float64 scalar turn a float32 update into float64 work).

A row: the op type and attrs, its slots, its hyper-parameters, and the reference
`fn(var, slots, hyper, grad, step) -> (var, slots)` computed in float64."""
from dataclasses import dataclass, field

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import registry as kernel_registry
from tensorweave.ops import training_ops

from .op_harness import rng_for

STEPS = 4
SHAPE = (3, 2)


@dataclass
class ApplyCase:
    name: str
    op_type: str
    slots: tuple          # slot names in signature order (after var)
    hyper: dict           # hyper-parameter name -> value (beta powers are per step, see below)
    reference: object
    attrs: dict = field(default_factory=dict)


def _hyper_at(case, step):
    """Hyper-parameter values at `step` (Adam's beta powers are beta ** (step + 1))."""
    values = dict(case.hyper)
    if "beta1_power" in values:
        values["beta1_power"] = case.hyper["beta1"] ** (step + 1)
        values["beta2_power"] = case.hyper["beta2"] ** (step + 1)
    return values


def _gd(var, slots, h, g):
    return var - h["alpha"] * g, {}


def _momentum(nesterov):
    def update(var, slots, h, g):
        accum = slots["accum"] * h["momentum"] + g
        step = h["lr"] * (g + h["momentum"] * accum) if nesterov else h["lr"] * accum
        return var - step, {"accum": accum}
    return update


def _adam(nesterov):
    def update(var, slots, h, g):
        m = h["beta1"] * slots["m"] + (1 - h["beta1"]) * g
        v = h["beta2"] * slots["v"] + (1 - h["beta2"]) * g * g
        lr_t = h["lr"] * np.sqrt(1 - h["beta2_power"]) / (1 - h["beta1_power"])
        numer = h["beta1"] * m + (1 - h["beta1"]) * g if nesterov else m
        return var - lr_t * numer / (np.sqrt(v) + h["epsilon"]), {"m": m, "v": v}
    return update


def _adagrad(update_slots):
    def update(var, slots, h, g):
        accum = slots["accum"] + g * g if update_slots else slots["accum"]
        return var - h["lr"] * g / np.sqrt(accum), {"accum": accum}
    return update


def _rmsprop(var, slots, h, g):
    ms = h["rho"] * slots["ms"] + (1 - h["rho"]) * g * g
    mom = h["momentum"] * slots["mom"] + h["lr"] * g / np.sqrt(ms + h["epsilon"])
    return var - mom, {"ms": ms, "mom": mom}


def _centered_rmsprop(var, slots, h, g):
    mg = h["rho"] * slots["mg"] + (1 - h["rho"]) * g
    ms = h["rho"] * slots["ms"] + (1 - h["rho"]) * g * g
    mom = h["momentum"] * slots["mom"] + h["lr"] * g / np.sqrt(ms - mg * mg + h["epsilon"])
    return var - mom, {"mg": mg, "ms": ms, "mom": mom}


ADAM_HYPER = {"beta1_power": None, "beta2_power": None, "lr": 0.1, "beta1": 0.9,
              "beta2": 0.999, "epsilon": 1e-3}
RMS_HYPER = {"lr": 0.05, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-2}
CASES = [
    ApplyCase("gradient_descent", "ApplyGradientDescent", (), {"alpha": 0.1}, _gd),
    ApplyCase("momentum", "ApplyMomentum", ("accum",), {"lr": 0.1, "momentum": 0.9},
              _momentum(False)),
    ApplyCase("momentum_nesterov", "ApplyMomentum", ("accum",), {"lr": 0.1, "momentum": 0.9},
              _momentum(True), {"use_nesterov": True}),
    ApplyCase("adam", "ApplyAdam", ("m", "v"), ADAM_HYPER, _adam(False)),
    ApplyCase("adam_nesterov", "ApplyAdam", ("m", "v"), ADAM_HYPER, _adam(True),
              {"use_nesterov": True}),
    ApplyCase("adagrad", "ApplyAdagrad", ("accum",), {"lr": 0.1}, _adagrad(True)),
    ApplyCase("adagrad_frozen_slots", "ApplyAdagrad", ("accum",), {"lr": 0.1}, _adagrad(False),
              {"update_slots": False}),
    ApplyCase("rmsprop", "ApplyRMSProp", ("ms", "mom"), RMS_HYPER, _rmsprop),
    ApplyCase("centered_rmsprop", "ApplyCenteredRMSProp", ("mg", "ms", "mom"), RMS_HYPER,
              _centered_rmsprop),
]
COVERED_OP_TYPES = {case.op_type for case in CASES}
TOLERANCE = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}


def _signature_inputs(case, var, slots, hyper, grad):
    """The op's inputs in signature order: refs, then values (grad in its declared place)."""
    refs, values = training_ops.APPLY_OPS[case.op_type][:2]
    by_name = {"var": var, **slots, **hyper, "grad": grad, "delta": grad}
    return [by_name[name] for name in list(refs) + list(values)]


def _initial(case, rng, dtype):
    var = rng.uniform(-1, 1, SHAPE)
    slots = {}
    for name in case.slots:
        # mg (the centered RMSProp mean) starts at zero, as the optimizer creates it; other
        # slots start positive so that square roots of accumulators are defined.
        slots[name] = np.zeros(SHAPE) if name == "mg" else rng.uniform(0.1, 0.5, SHAPE)
    return var.astype(dtype), {k: v.astype(dtype) for k, v in slots.items()}


def _params():
    return [pytest.param(case, np.dtype(dtype), id=f"{case.name}-{np.dtype(dtype).name}")
            for case in CASES for dtype in (np.float16, np.float32, np.float64)]


@pytest.mark.parametrize("case,dtype", _params())
def test_update_matches_numpy_for_several_steps(case, dtype):
    rng = rng_for(case.name, dtype.name)
    var_value, slot_values = _initial(case, rng, dtype)
    tf_dtype = tf.as_dtype(dtype)
    with tf.Graph().as_default():
        var = tf.Variable(var_value, name="var")
        slots = {name: tf.Variable(value, name=name) for name, value in slot_values.items()}
        hyper = {name: tf.placeholder(tf_dtype, [], name=name) for name in case.hyper}
        grad = tf.placeholder(tf_dtype, SHAPE, name="grad")
        update = training_ops.apply(
            case.op_type, _signature_inputs(case, var._variable,
                                            {k: v._variable for k, v in slots.items()},
                                            hyper, grad), **case.attrs)
        assert update.op.type == case.op_type
        assert update.dtype == tf_dtype and update.shape.as_list() == list(SHAPE)
        expected_var = var_value.astype(np.float64)
        expected_slots = {k: v.astype(np.float64) for k, v in slot_values.items()}
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            for step in range(STEPS):
                grad_value = rng.uniform(-1, 1, SHAPE).astype(dtype)
                hyper_values = _hyper_at(case, step)
                feed = {grad: grad_value}
                feed.update({hyper[k]: np.asarray(v, dtype=dtype)
                             for k, v in hyper_values.items()})
                # The reference sees exactly what the op sees: values rounded to the dtype.
                rounded = {k: float(np.asarray(v, dtype=dtype)) for k, v in hyper_values.items()}
                expected_var, expected_slots = case.reference(
                    expected_var, expected_slots, rounded, grad_value.astype(np.float64))
                out = session.run(update, feed)
                stored_var, stored_slots = session.run([var, slots])
                where = f"{case.name}[{dtype.name}] step {step}"
                for label, got, want in [("output", out, expected_var),
                                         ("var", stored_var, expected_var)] + [
                        (name, stored_slots[name], expected_slots.get(name, slot_values[name]))
                        for name in case.slots]:
                    assert got.dtype == dtype, f"{where} {label}: dtype {got.dtype}"
                    assert got.shape == SHAPE, f"{where} {label}: shape {got.shape}"
                    np.testing.assert_allclose(got, want, rtol=TOLERANCE[dtype.type],
                                               atol=TOLERANCE[dtype.type],
                                               err_msg=f"{where} {label}")
                # Carry on from what is stored: float16 rounding would otherwise drift.
                expected_var = stored_var.astype(np.float64)
                expected_slots = {k: v.astype(np.float64) for k, v in stored_slots.items()}


# --- the kernels' temporaries keep the dtype ------------------------------------------------------
class _Tracked(np.ndarray):
    """An array that records the dtype of every ufunc result computed from it."""

    seen = []

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        plain = [np.asarray(x) if isinstance(x, _Tracked) else x for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, _Tracked) else o for o in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        for item in results:
            if isinstance(item, (np.ndarray, np.generic)):
                _Tracked.seen.append((ufunc.__name__, np.asarray(item).dtype))
        if out is not None:
            return out[0] if len(out) == 1 else out
        if isinstance(result, np.ndarray) or isinstance(result, np.generic):
            return np.asarray(result).view(_Tracked)
        return result


class _Cell:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def read(self):
        return self.value


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_kernel_temporaries_keep_the_dtype(case, dtype):
    rng = np.random.default_rng(0)
    var_value, slot_values = _initial(case, rng, dtype)
    cells = [_Cell("var", var_value.view(_Tracked))] + [
        _Cell(name, slot_values[name].view(_Tracked)) for name in case.slots]
    hyper = {k: np.asarray(v, dtype=dtype).view(_Tracked)
             for k, v in _hyper_at(case, 0).items()}
    grad = rng.uniform(-1, 1, SHAPE).astype(dtype).view(_Tracked)
    values = _signature_inputs(case, None, dict.fromkeys(case.slots), hyper,
                               grad)[1 + len(case.slots):]
    kernel = kernel_registry.get_kernel(case.op_type)
    attrs = {"use_locking": False, "use_nesterov": False, "update_slots": True, **case.attrs}
    _Tracked.seen = []
    kernel.compute(*cells, *values, **{k: attrs[k] for k in kernel.attr_names})
    promoted = [(name, str(dt)) for name, dt in _Tracked.seen if dt != dtype]
    assert _Tracked.seen, "the tracking array saw no arithmetic"
    assert not promoted, f"{case.op_type} computed in another dtype: {promoted}"
    for cell in cells:
        assert cell.value.dtype == dtype


# --- bad inputs ---------------------------------------------------------------------------------
def test_gradient_shape_mismatch_names_the_op():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros((2, 3), np.float32))
        with pytest.raises(ValueError, match=r"my_sgd.*ApplyGradientDescent"):
            training_ops.apply("ApplyGradientDescent",
                               [var._variable, tf.constant(0.1), tf.zeros([3, 2])],
                               name="my_sgd")
        accum = tf.Variable(np.zeros((2, 3), np.float32))
        with pytest.raises(ValueError, match="ApplyMomentum"):
            training_ops.apply("ApplyMomentum", [var._variable, accum._variable,
                                                 tf.constant(0.1), tf.zeros([2]),
                                                 tf.constant(0.9)])


def test_hyper_parameter_dtype_mismatch_names_the_op():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros(2, np.float32))
        with pytest.raises(TypeError, match=r"my_sgd.*ApplyGradientDescent"):
            training_ops.apply("ApplyGradientDescent",
                               [var._variable, tf.constant(0.1, tf.float64), tf.zeros([2])],
                               name="my_sgd")


def test_wrong_number_of_inputs_is_rejected():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros(2, np.float32))
        with pytest.raises(ValueError, match="ApplyAdam"):
            training_ops.apply("ApplyAdam", [var._variable, tf.zeros([2])])


def test_update_of_a_non_variable_raises_invalid_argument_naming_the_op():
    with tf.Graph().as_default():
        not_a_variable = tf.zeros([2])
        update = training_ops.apply("ApplyGradientDescent",
                                    [not_a_variable, tf.constant(0.1), tf.ones([2])],
                                    name="my_sgd")
        with tf.Session() as session:
            with pytest.raises(tf.errors.InvalidArgumentError, match="my_sgd"):
                session.run(update)


def test_run_time_gradient_shape_mismatch_raises_invalid_argument():
    with tf.Graph().as_default():
        var = tf.Variable(np.zeros(2, np.float32), name="weights")
        grad = tf.placeholder(tf.float32)
        update = training_ops.apply("ApplyGradientDescent",
                                    [var._variable, tf.constant(0.1), grad], name="late_sgd")
        with tf.Session() as session:
            session.run(var.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match="late_sgd"):
                session.run(update, {grad: np.zeros(3, np.float32)})
