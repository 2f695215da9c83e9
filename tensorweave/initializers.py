"""`tf.initializers`: re-exports."""
from tensorweave.ops.init_ops import (Zeros as zeros, Ones as ones,  # noqa: F401
                                      Constant as constant, RandomUniform as random_uniform,
                                      RandomNormal as random_normal,
                                      TruncatedNormal as truncated_normal,
                                      VarianceScaling as variance_scaling,
                                      GlorotUniform as glorot_uniform,
                                      GlorotNormal as glorot_normal, he_normal, he_uniform,
                                      lecun_normal, lecun_uniform)
from tensorweave.ops.matrix_initializers import (Orthogonal as orthogonal,  # noqa: F401
                                                 Identity as identity,
                                                 UniformUnitScaling as uniform_unit_scaling)
from tensorweave.ops.variables import (global_variables_initializer as global_variables,  # noqa: F401
                                       local_variables_initializer as local_variables,
                                       variables_initializer as variables)
from tensorweave.ops.compat_ops import tables_initializer  # noqa: F401
