"""Activation ops (Relu6, Elu, Selu, Softplus, LeakyRelu) and their gradient primitives against
NumPy, with numeric gradients of first and second order away from the kinks."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.op_util import make_tensor

from .op_harness import (ALL_FLOATS, FLOATS, Floats, OpCase, check_case_gradient,
                         check_gradient_rows_cover, covered, gradient_params, run_case,
                         value_params)

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _relu6(x):
    return np.clip(x, 0, 6)


def _elu(x):
    return np.where(x < 0, np.exp(np.minimum(x, 0)) - 1, x)


def _selu(x):
    return SELU_SCALE * np.where(x < 0, SELU_ALPHA * (np.exp(np.minimum(x, 0)) - 1), x)


def _softplus(x):
    return np.logaddexp(0, x)


def _sigmoid(x):
    return 0.5 * (1 + np.tanh(x / 2))


def _leaky(alpha):
    return lambda x: np.where(x > 0, x, alpha * x)


_RELU6_DOMAIN = Floats((3, 4), -3, 9, avoid=[0, 6])
_KINK = Floats((3, 4), -3, 3, avoid=[0])
FORWARD_CASES = [
    OpCase("relu6", {"Relu6"}, tf.nn.relu6, _relu6, (_RELU6_DOMAIN,), ALL_FLOATS, grad=2),
    OpCase("elu", {"Elu"}, tf.nn.elu, _elu, (_KINK,), ALL_FLOATS, grad=2),
    OpCase("selu", {"Selu"}, tf.nn.selu, _selu, (_KINK,), ALL_FLOATS, grad=2),
    OpCase("softplus", {"Softplus"}, tf.nn.softplus, _softplus, (Floats((3, 4), -4, 4),),
           ALL_FLOATS, grad=2),
    OpCase("leaky_relu_default_alpha", {"LeakyRelu"}, tf.nn.leaky_relu, _leaky(0.2), (_KINK,),
           ALL_FLOATS, grad=2),
    OpCase("leaky_relu_alpha", {"LeakyRelu"}, lambda x: tf.nn.leaky_relu(x, alpha=0.01),
           _leaky(0.01), (_KINK,), FLOATS, grad=2),
    OpCase("log_sigmoid", {"Softplus", "Neg"}, tf.math.log_sigmoid, lambda x: -_softplus(-x),
           (Floats((3, 4), -4, 4),), FLOATS, grad=2),
    # Saturated inputs: nothing overflows, nothing warns, no NaN.
    OpCase("softplus_saturated", {"Softplus"}, tf.nn.softplus, _softplus,
           (Floats((8,), -80, 80),), FLOATS),
    OpCase("elu_selu_saturated", {"Elu", "Selu"}, lambda x: [tf.nn.elu(x), tf.nn.selu(x)],
           lambda x: [_elu(x), _selu(x)], (Floats((8,), -80, 80),), FLOATS),
]


def _grad_case(op_type, reference, second_domain, attrs=None, label=None):
    return OpCase(label or f"{op_type.lower()}_direct", {op_type},
                  lambda g, v: make_tensor(op_type, [g, v], attrs), reference,
                  (Floats((3, 4)), second_domain), FLOATS, grad=2)


def _elu_grad(g, y):
    return np.where(y < 0, g * (y + 1), g)


def _selu_grad(g, y):
    return np.where(y < 0, g * (y + SELU_SCALE * SELU_ALPHA), g * SELU_SCALE)


GRAD_CASES = [
    _grad_case("Relu6Grad", lambda g, x: np.where((x > 0) & (x < 6), g, 0), _RELU6_DOMAIN),
    _grad_case("EluGrad", _elu_grad, Floats((3, 4), -0.9, 2, avoid=[0])),
    _grad_case("SeluGrad", _selu_grad, Floats((3, 4), -1.7, 2, avoid=[0])),
    _grad_case("SoftplusGrad", lambda g, x: g * _sigmoid(x), Floats((3, 4), -4, 4)),
    _grad_case("LeakyReluGrad", lambda g, x: np.where(x > 0, g, 0.3 * g), _KINK,
               {"alpha": 0.3}),
]

CASES = FORWARD_CASES + GRAD_CASES
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def test_every_differentiable_op_has_a_gradient_row():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


def test_leaky_relu_alpha_is_an_attr_kept_by_its_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        y = tf.nn.leaky_relu(x, alpha=0.5)
        (grad,) = tf.gradients(y, [x])
        assert y.op.get_attr("alpha") == 0.5
        assert grad.op.type == "LeakyReluGrad" and grad.op.get_attr("alpha") == 0.5
        with tf.Session() as session:
            value = session.run(grad, {x: np.array([-1.0, 2.0, -3.0], np.float32)})
    np.testing.assert_allclose(value, [0.5, 1.0, 0.5])
