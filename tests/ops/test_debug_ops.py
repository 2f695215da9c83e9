"""Debugging ops: CheckNumerics, Assert and the tf.debugging.assert_* checks, tf.print
(StringFormat + PrintV2) and tf.Print, with their messages and the errors they raise."""
import io

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import debug_ops

from .op_harness import (FLOATS, INTS, REALS, Fixed, Floats, OpCase, check_case_gradient,
                         check_gradient_rows_cover, covered, gradient_params, run_case,
                         value_params)

_SINK = io.StringIO()  # where the rows' prints go


def _after(ops, x):
    with tf.control_dependencies(ops if isinstance(ops, list) else [ops]):
        return tf.identity(x)


CASES = [
    OpCase("check_numerics_passes_finite_values", {"CheckNumerics"},
           lambda x: tf.check_numerics(x, "x must be finite"), lambda x: x, (Floats((2, 3)),),
           FLOATS + (np.float16,), grad=2),
    OpCase("assert_true_passes", {"Assert"},
           lambda x: _after(tf.Assert(tf.reduce_all(x < 10), [x]), x), lambda x: x,
           (Floats((2, 3)),), REALS),
    OpCase("assert_comparisons_that_hold", {"Assert", "Less", "LessEqual", "Equal"},
           lambda x: _after([tf.assert_less(x, 10 + x * 0), tf.debugging.assert_equal(x, x),
                             tf.assert_non_negative(x * x), tf.assert_positive(x * x + 1),
                             tf.assert_greater_equal(x, x), tf.assert_none_equal(x, x + 1)], x),
           lambda x: x, (Floats((2, 3)),), REALS),
    OpCase("string_format", {"StringFormat"},
           lambda x, y: debug_ops.string_format("x = {}, y = {}!", [x, y]),
           lambda x, y: np.array(b"x = [1 2 3], y = -4!", dtype=object),
           (Fixed([1, 2, 3]), Fixed(-4)), INTS, out_dtype=object),
    OpCase("string_format_summarized", {"StringFormat"},
           lambda x: debug_ops.string_format("{}", [x], summarize=2),
           lambda x: np.array(b"[[0 1 ... 4 5]\n [6 7 ... 10 11]]", dtype=object),
           (Fixed(np.arange(12).reshape(2, 6)),), (np.int64,), out_dtype=object),
    # As TF: booleans print as 1 and 0, string tensors in double quotes.
    OpCase("string_format_bools_and_strings", {"StringFormat"},
           lambda: debug_ops.string_format("{} {} {}", [tf.constant([True, False]),
                                                        tf.constant(["ab", "c"]),
                                                        tf.constant("s")]),
           lambda: np.array(b'[1 0] ["ab" "c"] "s"', dtype=object), (), (np.float32,),
           out_dtype=object),
    OpCase("print_v2_in_dependencies", {"PrintV2", "StringFormat"},
           lambda x: _after(tf.print("x:", x, output_stream=_SINK), x), lambda x: x,
           (Floats((2, 2)),), FLOATS),
    OpCase("print_identity", {"Print"}, lambda x: tf.Print(x, [x], "x = ", first_n=1), lambda x: x,
           (Floats((3,)),), FLOATS, grad=2),
]
COVERED_OP_TYPES = covered(CASES)


@pytest.mark.parametrize("case,dtype,mode", value_params(CASES))
def test_values_dtypes_and_shapes(case, dtype, mode):
    run_case(case, dtype, mode)


@pytest.mark.parametrize("case,order,static_shapes", gradient_params(CASES))
def test_numeric_gradient(case, order, static_shapes):
    check_case_gradient(case, order, static_shapes)


def test_every_differentiable_op_has_a_gradient_row():
    check_gradient_rows_cover(COVERED_OP_TYPES, CASES)


def _run(fetches, feed_dict=None):
    with tf.Session() as session:
        return session.run(fetches, feed_dict)


# --- CheckNumerics --------------------------------------------------------------------------------
def test_check_numerics_names_the_op_and_the_message():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        checked = tf.check_numerics(x, "activations blew up", name="my_check")
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"my_check \(CheckNumerics.*activations blew up : Tensor had "
                                 r"NaN values"):
            _run(checked, {x: [1.0, np.nan]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="had Inf values"):
            _run(checked, {x: [np.inf, 1.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="had Inf and NaN values"):
            _run(checked, {x: [np.nan, -np.inf]})  # in TF's words
        np.testing.assert_array_equal(_run(checked, {x: [1.0, 2.0]}), [1.0, 2.0])
        assert tf.debugging.check_numerics is tf.check_numerics


def test_assert_all_finite_takes_both_tf1_argument_names():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        checks = [tf.debugging.assert_all_finite(x, "first"),
                  tf.debugging.assert_all_finite(x=x, message="second"),
                  tf.verify_tensor_all_finite(t=x, msg="third")]
        np.testing.assert_array_equal(_run(checks, {x: [1.0, 2.0]}), [[1.0, 2.0]] * 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match="second : Tensor had NaN"):
            _run(checks[1], {x: [1.0, np.nan]})
        with pytest.raises(ValueError, match="message"):
            tf.debugging.assert_all_finite(x)


def test_check_numerics_checks_the_gradient_too():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        y = tf.check_numerics(x, "input of sqrt")
        grad, = tf.gradients(tf.reduce_sum(tf.sqrt(y)), x)  # infinite at 0
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="detected in gradient. input of sqrt : Tensor had Inf"):
            _run(grad, {x: [0.0, 4.0]})


# --- Assert and the assert_* checks ---------------------------------------------------------------
def test_failed_assert_prints_its_data_and_names_the_op():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [None])
        check = tf.assert_equal(x, [1, 2, 3], message="x must count", name="count_check")
        guarded = _after(check, x)
        np.testing.assert_array_equal(_run(guarded, {x: [1, 2, 3]}), [1, 2, 3])
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            _run(guarded, {x: [1, 2, 4]})
    message = str(info.value)
    assert "count_check" in message and "Assert" in message
    assert "x must count" in message and "Condition x == y" in message
    assert "[1 2 4]" in message and "[1 2 3]" in message


def test_assert_and_print_show_booleans_as_numbers_and_strings_bare():
    with tf.Graph().as_default():
        check = tf.Assert(tf.constant(False), [tf.constant([True, False]), tf.constant(["x"])])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[\[1 0\]\] \[\[x\]\]"):
            _run(check)


def test_assert_summarize_limits_the_printed_data():
    with tf.Graph().as_default():
        check = tf.Assert(tf.constant(False), ["big:", tf.range(100)], summarize=2)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[big:\] \[\[0 1 ... 98 99\]"):
            _run(check)


def test_statically_failing_checks_fail_at_build_time():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"x < y.*\[3 1\]"):
            tf.assert_less(tf.constant([3, 1]), tf.constant([2, 2]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="x > 0"):
            tf.debugging.assert_positive(tf.constant([1.0, 0.0]))
        with pytest.raises(ValueError, match="must have rank 3; received rank 2"):
            tf.assert_rank(tf.zeros([2, 2]), 3)
        with pytest.raises(ValueError, match="rank at least 3"):
            tf.assert_rank_at_least(tf.zeros([2, 2]), 3)
        with pytest.raises(TypeError, match="must be of type int32"):
            tf.assert_type(tf.zeros([2]), tf.int32)
        with pytest.raises(TypeError, match="integer"):
            tf.debugging.assert_integer(tf.zeros([2]))


@pytest.mark.parametrize("check,good,bad", [
    (tf.assert_greater, [[2, 3], [1, 2]], [[2, 3], [2, 2]]),
    (tf.assert_less_equal, [[1, 2], [1, 2]], [[1, 3], [1, 2]]),
    (tf.assert_none_equal, [[1, 2], [2, 1]], [[1, 2], [1, 3]]),
])
def test_binary_checks_at_run_time(check, good, bad):
    with tf.Graph().as_default():
        x, y = tf.placeholder(tf.int32, [2]), tf.placeholder(tf.int32, [2])
        op = check(x, y)
        _run(op, {x: good[0], y: good[1]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
            _run(op, {x: bad[0], y: bad[1]})


def test_sign_checks_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        checks = [tf.assert_non_negative(x), tf.assert_negative(-x - 1),
                  tf.assert_non_positive(-x)]
        _run(checks, {x: [0.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="x >= 0"):
            _run(checks, {x: [-1.0]})


def test_rank_checks_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        check = tf.assert_rank(x, 2, message="need a matrix")
        assert tf.assert_rank(tf.zeros([2, 2]), 2).type == "NoOp"
        _run(check, {x: np.zeros((2, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="need a matrix"):
            _run(check, {x: np.zeros(3)})


def test_rank_checks_take_tf1_positional_arguments():
    # TF 1.x: assert_rank(x, rank, data, summarize, message, name).
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        check = tf.assert_rank(x, 2, ["data for rank"], 3, "need a matrix", "my_rank")
        at_least = tf.debugging.assert_rank_at_least(x, 3, None, None, "need rank 3")
        assert check.name.startswith("my_rank")
        with pytest.raises(tf.errors.InvalidArgumentError, match="data for rank"):
            _run(check, {x: np.zeros(3)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="need rank 3"):
            _run(at_least, {x: np.zeros((2, 2))})


@pytest.mark.parametrize("dtype,close,far", [
    (tf.float32, 1.0 + 5e-7, 1.0 + 5e-6),
    (tf.float64, 1.0 + 1e-15, 1.0 + 1e-13),
])
def test_assert_near_uses_ten_epsilons_of_the_dtype_by_default(dtype, close, far):
    with tf.Graph().as_default():
        x = tf.placeholder(dtype, [2])
        check = tf.debugging.assert_near(x, tf.constant([1.0, 2.0], dtype), message="not near")
        _run(check, {x: [close, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="not near"):
            _run(check, {x: [far, 2.0]})


def test_assert_near_tolerances_are_relative_to_y_plus_absolute():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2])
        check = tf.assert_near(x, tf.constant([100.0, 0.0], tf.float64), rtol=0.01, atol=0.1)
        _run(check, {x: [100.0 + 1.05, 0.09]})  # |dx| <= 0.1 + 0.01 * |y|
        with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
            _run(check, {x: [100.0 + 1.15, 0.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
            _run(check, {x: [100.0, 0.11]})
        with pytest.raises(TypeError, match="assert_near.*int32"):
            tf.assert_near(tf.constant([1]), tf.constant([1]))


def test_assert_shapes_relates_named_dimensions():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None])
        check = tf.debugging.assert_shapes([(x, ("n", 3)), (y, ("n",))])
        _run(check, {x: np.zeros((4, 3)), y: np.zeros(4)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="dimension 0 of"):
            _run(check, {x: np.zeros((4, 3)), y: np.zeros(5)})
        with pytest.raises(ValueError, match="is 3, expected 2"):
            tf.debugging.assert_shapes([(x, (None, 2))])


# --- tf.print, tf.Print ---------------------------------------------------------------------------
def test_print_writes_formatted_tensors_to_the_stream():
    sink = io.StringIO()
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int64, [None])
        op = tf.print("x:", x, {"n": tf.size(x)}, [1.5, "{}"], output_stream=sink, summarize=2,
                      sep=" | ", end=";\n")
        _run(op, {x: np.arange(10)})
        _run(op, {x: np.array([7])})
    assert sink.getvalue() == ("x: | [0 1 ... 8 9] | {'n': 10} | [1.5, {}];\n"
                               "x: | [7] | {'n': 1} | [1.5, {}];\n")


def test_print_defaults_to_stderr(capsys):
    with tf.Graph().as_default():
        _run(tf.print("loss", tf.constant(0.25), tf.constant("done")))
    # A Python string is part of the template; a string tensor prints quoted, as in TF.
    assert capsys.readouterr().err == 'loss 0.25 "done"\n'


def test_print_to_a_file_stream(tmp_path):
    target = tmp_path / "log.txt"
    with tf.Graph().as_default():
        _run(tf.print(tf.constant([1.0, 2.5]), output_stream=f"file://{target}"))
    assert target.read_text() == "[1 2.5]\n"


def test_print_rejects_unknown_streams():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Unknown output stream"):
            tf.print("x", output_stream="stdlog")
        with pytest.raises(TypeError, match="write"):
            tf.print("x", output_stream=42)


def test_tf_print_is_identity_that_prints_the_first_n_times(capsys):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        printed = tf.Print(x, [x, tf.constant("tag")], message="values: ", first_n=2,
                           summarize=3)
        doubled = printed * 2
        with tf.Session() as session:
            for _ in range(3):
                np.testing.assert_array_equal(session.run(doubled, {x: np.arange(5.0)}),
                                              np.arange(5.0) * 2)
    assert capsys.readouterr().err == "values: [0 1 2...][tag]\n" * 2


# Expected texts as TF 2.21's tf.compat.v1.Print writes them for the same inputs.
@pytest.mark.parametrize("value,summarize,expected", [
    (np.arange(12).reshape(3, 4), None, "[[0 1 2...]...]"),
    (np.arange(12).reshape(3, 4), 5, "[[0 1 2 3][4...]...]"),
    (np.arange(12).reshape(3, 4), -1, "[[0 1 2 3][4 5 6 7][8 9 10 11]]"),
    (np.arange(24).reshape(2, 3, 4), 13, "[[[0 1 2 3][4 5 6 7][8 9 10 11]][[12...]]...]"),
    (np.arange(6).reshape(2, 3, 1), 4, "[[[0][1][2]][[3]]...]"),
    (np.arange(6).reshape(2, 3), 3, "[[0 1 2]...]"),
    (np.arange(6).reshape(3, 2), 0, "[...]"),
    (np.array(5), None, "[5]"),
    (np.zeros((0, 3)), None, "[]"),
    (np.array([True, False]), None, "[1 0]"),
    (np.array([1 / 3, 123456789.0, 0.1], np.float32), None, "[0.333333343 123456792 0.1]"),
    (np.array([1 / 3, 123456789.0, 1234567.0], np.float64), None,
     "[0.33333333333333331 123456789 1234567]"),
    (np.array([1 / 3, 0.1], np.float16), None, "[0.333251953 0.0999755859]"),
])
def test_tf_print_formats_values_as_tf(capsys, value, summarize, expected):
    with tf.Graph().as_default():
        printed = tf.Print(tf.constant(0), [tf.constant(value)], "m:", summarize=summarize)
        _run(printed)
    assert capsys.readouterr().err == f"m:{expected}\n"


def test_tf_print_v2_writes_floats_with_tf_precision():
    sink = io.StringIO()
    with tf.Graph().as_default():
        _run(tf.print(tf.constant([1 / 3, 1e20], tf.float64), tf.constant(1 / 3),
                      output_stream=sink))
    assert sink.getvalue() == "[0.33333333333333331 1e+20] 0.333333343\n"
