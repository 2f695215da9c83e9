"""`tf.math`: re-exports."""
from tensorweave.ops.math_ops import (add, subtract, multiply, divide, truediv, floordiv,  # noqa: F401
                                      floormod, pow, negative, abs, sign, square, sqrt, rsqrt,
                                      exp, expm1, log, log1p, tanh, sigmoid, reciprocal, sin,
                                      cos, floor, ceil, round, maximum, minimum,
                                      squared_difference, add_n, reduce_sum, reduce_mean,
                                      reduce_max, reduce_min, reduce_prod, reduce_all,
                                      reduce_any, argmax, argmin, equal, not_equal, less,
                                      less_equal, greater, greater_equal, logical_and,
                                      logical_or, logical_not, logical_xor,
                                      unsorted_segment_sum, invert_permutation, is_nan, is_inf,
                                      is_finite)
from tensorweave.ops.math_ops import mod, divide_no_nan  # noqa: F401
from tensorweave.ops.cumulative_ops import cumsum, cumprod  # noqa: F401
from tensorweave.ops.reduction_ops import (reduce_logsumexp, count_nonzero,  # noqa: F401
                                           reduce_euclidean_norm, reduce_variance, reduce_std)
from tensorweave.ops.sort_ops import top_k  # noqa: F401
from tensorweave.ops.nn_ops import softmax, log_softmax  # noqa: F401
from tensorweave.ops.activation_ops import softplus, log_sigmoid  # noqa: F401
from tensorweave.ops.nn_impl import in_top_k, l2_normalize, softsign  # noqa: F401
# Trigonometric and special functions, segment reductions, compositions.
from tensorweave.ops.special_math_ops import (acos, acosh, asin, asinh, atan, atan2,  # noqa: F401
                                              atanh, cosh, sinh, tan, erf, erfc, erfinv, ndtri,
                                              lgamma, digamma, polygamma, zeta, rint, xlogy,
                                              xdivy, xlog1py, nextafter)
from tensorweave.ops.segment_ops import (segment_sum, segment_mean, segment_max,  # noqa: F401
                                         segment_min, segment_prod, unsorted_segment_max,
                                         unsorted_segment_min, unsorted_segment_prod,
                                         unsorted_segment_mean, unsorted_segment_sqrt_n,
                                         bincount, confusion_matrix)
from tensorweave.ops.math_compose_ops import (multiply_no_nan, reciprocal_no_nan,  # noqa: F401
                                              accumulate_n, polyval, lbeta,
                                              cumulative_logsumexp, zero_fraction,
                                              is_non_decreasing, is_strictly_increasing, real,
                                              imag, conj, angle)
from tensorweave.ops.nn_compose_ops import approx_max_k, approx_min_k  # noqa: F401
from tensorweave.ops.special_functions_ops import (bessel_i0, bessel_i0e, bessel_i1,  # noqa: F401
                                                   bessel_i1e, igamma, igammac, betainc,
                                                   erfcinv)
from tensorweave import math_special as special  # noqa: F401
from tensorweave.ops.array_extra_ops import truncatediv, truncatemod  # noqa: F401
from tensorweave.ops.math_ops import scalar_mul  # noqa: F401
