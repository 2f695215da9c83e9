"""Padding (CONSTANT with any value, REFLECT, SYMMETRIC), Tile and ReverseV2 against NumPy, with
numeric gradients (MirrorPad and MirrorPadGrad are each other's gradient) and the errors of bad
paddings, multiples and axes."""
import numpy as np
import pytest

import tensorweave as tf

from .op_harness import (ALL_FLOATS, FLOATS, INTS, REALS, Fixed, Floats, OpCase,
                         check_case_gradient, check_gradient_rows_cover, check_kernel_precision,
                         covered, gradient_params, precision_params, run_case, value_params)

WITH_BOOL = REALS + (np.bool_,)
_X23 = Floats((2, 3))
_X234 = Floats((2, 3, 4))


def _pad_case(label, mode, paddings, shape=(3, 4), dtypes=FLOATS, grad=2, **kw):
    numpy_mode = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode]
    value = kw.pop("constant_values", 0)
    op_type = "MirrorPad" if mode != "CONSTANT" else ("PadV2" if value else "Pad")
    extra = {"constant_values": value} if mode == "CONSTANT" else {}
    return OpCase(f"pad_{label}", {op_type},
                  lambda x: tf.pad(x, paddings, mode=mode, **extra),
                  lambda x: np.pad(x, paddings, mode=numpy_mode, **extra),
                  (Floats(shape),), dtypes, grad=grad, **kw)


PAD_CASES = [
    _pad_case("constant_value", "CONSTANT", [[1, 0], [2, 1]], constant_values=1.5),
    _pad_case("constant_value_ints", "CONSTANT", [[0, 2], [1, 1]], dtypes=INTS, grad=0,
              constant_values=-7),
    _pad_case("reflect", "REFLECT", [[2, 1], [3, 2]], dtypes=REALS),
    _pad_case("reflect_lowercase_mode", "REFLECT", [[1, 1], [0, 3]]),
    _pad_case("symmetric", "SYMMETRIC", [[3, 2], [1, 4]], dtypes=REALS),
    _pad_case("symmetric_rank3", "SYMMETRIC", [[1, 0], [0, 2], [2, 2]], shape=(2, 3, 2)),
    _pad_case("reflect_vector", "REFLECT", [[3, 3]], shape=(4,)),
    OpCase("pad_constant_value_tensor", {"PadV2"},
           lambda x, v: tf.pad(x, [[1, 1], [0, 1]], constant_values=v),
           lambda x, v: np.pad(x, [[1, 1], [0, 1]], constant_values=v), (_X23, Floats(())),
           FLOATS, grad=2),
    OpCase("pad_fed_paddings", {"MirrorPad"}, lambda x, p: tf.pad(x, p, mode="symmetric"),
           lambda x, p: np.pad(x, p, mode="symmetric"), (_X23, Fixed([[1, 2], [3, 0]], np.int32)),
           FLOATS, grad=2, static_exact=False),
]


def _mirror_grad_case(label, mode, paddings, shape):
    padded = np.pad(np.zeros(shape), paddings).shape

    def build(dy):
        x = tf.zeros(shape, dtype=dy.dtype)
        return tf.gradients(tf.pad(x, paddings, mode=mode), x, grad_ys=dy)[0]

    def reference(dy):  # the adjoint of padding, by its definition: pad an index array
        source = np.pad(np.arange(int(np.prod(shape))).reshape(shape), paddings,
                        mode=mode.lower())
        out = np.zeros(int(np.prod(shape)))
        np.add.at(out, source.reshape(-1), dy.reshape(-1))
        return out.reshape(shape)

    return OpCase(f"mirror_pad_grad_{label}", {"MirrorPadGrad"}, build, reference,
                  (Floats(padded),), FLOATS, grad=2, modes=("static", "partial"))


MIRROR_GRAD_CASES = [
    _mirror_grad_case("reflect", "REFLECT", [[2, 1], [1, 2]], (3, 3)),
    _mirror_grad_case("symmetric", "SYMMETRIC", [[0, 3], [2, 1]], (3, 2)),
]

TILE_CASES = [
    OpCase("tile_rows", {"Tile"}, lambda x: tf.tile(x, [3, 1]), lambda x: np.tile(x, [3, 1]),
           (_X23,), WITH_BOOL, grad=2),
    OpCase("tile_rank3", {"Tile"}, lambda x: tf.tile(x, [2, 1, 3]),
           lambda x: np.tile(x, [2, 1, 3]), (Floats((2, 1, 2)),), ALL_FLOATS, grad=2),
    OpCase("tile_zero_multiple", {"Tile"}, lambda x: tf.tile(x, [0, 2]),
           lambda x: np.tile(x, [0, 2]), (_X23,), FLOATS, grad=1),
    OpCase("tile_fed_multiples", {"Tile"}, tf.tile, np.tile, (_X23, Fixed([2, 2], np.int32)), FLOATS,
           grad=2, static_exact=False),
]

REVERSE_CASES = [
    OpCase(f"reverse_{label}", {"ReverseV2"}, (lambda a: lambda x: tf.reverse(x, a))(axes),
           (lambda a: lambda x: np.flip(x, a) if a else x)(axes), (_X234,),
           WITH_BOOL if label == "two_axes" else FLOATS, grad=2)
    for label, axes in [("axis0", [0]), ("two_axes", [0, 2]), ("negative", [-1]),
                        ("none", []), ("int_axis", 1)]
]

CASES = PAD_CASES + MIRROR_GRAD_CASES + TILE_CASES + REVERSE_CASES
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,dtype", precision_params(CASES))
def test_kernels_keep_their_input_precision(case, dtype):
    check_kernel_precision(case, dtype)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def test_every_differentiable_op_has_a_gradient_row():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)


def test_case_names_are_unique():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


# --- bad inputs ---------------------------------------------------------------------------------
def _run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


def test_mirror_paddings_wider_than_the_input_fail_naming_the_op():
    with tf.Graph().as_default():
        x = tf.zeros([3, 2])
        with pytest.raises(ValueError, match=r"MirrorPad.*REFLECT paddings \[0, 2\] of "
                                             r"dimension 1 exceed 1"):
            tf.pad(x, [[0, 0], [0, 2]], mode="REFLECT")
        tf.pad(x, [[0, 0], [0, 2]], mode="SYMMETRIC")  # SYMMETRIC may repeat the whole axis
        with pytest.raises(ValueError, match=r"MirrorPad.*SYMMETRIC paddings \[4, 0\]"):
            tf.pad(x, [[4, 0], [0, 0]], mode="SYMMETRIC")
        paddings = tf.placeholder(tf.int32, [2, 2])
        padded = tf.pad(x, paddings, mode="REFLECT", name="my_pad")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"my_pad.*\[3, 0\]"):
            _run(padded, {paddings: [[3, 0], [0, 0]]})


def test_bad_pad_arguments():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="mode must be one of"):
            tf.pad(tf.zeros([2]), [[1, 1]], mode="WRAP")
        with pytest.raises(ValueError, match=r"PadV2.*non-negative"):
            tf.pad(tf.zeros([2]), [[-1, 1]], constant_values=1.0)
        with pytest.raises(ValueError, match=r"MirrorPad.*shape \[2, 2\]"):
            tf.pad(tf.zeros([2, 2]), [[1, 1]], mode="SYMMETRIC")


def test_tile_and_reverse_errors_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Tile.*one entry per dimension"):
            tf.tile(tf.zeros([2, 3]), [2])
        with pytest.raises(ValueError, match=r"Tile.*non-negative"):
            tf.tile(tf.zeros([2, 3]), [2, -1])
        with pytest.raises(ValueError, match=r"ReverseV2.*out of range"):
            tf.reverse(tf.zeros([2, 3]), [2])
        with pytest.raises(ValueError, match=r"ReverseV2.*more than once"):
            tf.reverse(tf.zeros([2, 3]), [1, -1])
        multiples = tf.placeholder(tf.int32, [None])
        tiled = tf.tile(tf.zeros([2, 3]), multiples, name="my_tile")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"my_tile.*\[1, 2, 3\]"):
            _run(tiled, {multiples: [1, 2, 3]})
