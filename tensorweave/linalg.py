"""`tf.linalg`: re-exports."""
from tensorweave.ops.clip_ops import norm, global_norm  # noqa: F401
from tensorweave.ops.linalg_ops import einsum, matmul, tensordot  # noqa: F401
from tensorweave.ops.nn_impl import l2_normalize  # noqa: F401
from tensorweave.ops.matrix_ops import (adjoint, band_part, cross, eye, matrix_transpose,  # noqa: F401
                                        matvec, trace)
from tensorweave.ops.matrix_ops import matrix_transpose as transpose  # noqa: F401
from tensorweave.ops.matrix_ops import matrix_diag as diag  # noqa: F401
from tensorweave.ops.matrix_ops import matrix_diag_part as diag_part  # noqa: F401
from tensorweave.ops.matrix_ops import matrix_set_diag as set_diag  # noqa: F401
from tensorweave.ops.matrix_ops import diag as tensor_diag  # noqa: F401
from tensorweave.ops.matrix_ops import diag_part as tensor_diag_part  # noqa: F401
from tensorweave.ops.linalg_decomp_ops import (cholesky, cholesky_solve, det, eigh,  # noqa: F401
                                               eigvalsh, inv, logdet, lstsq, matrix_rank,
                                               normalize, pinv, qr, slogdet, solve, svd,
                                               triangular_solve)
from tensorweave.ops.linalg_more_ops import (logm, lu, lu_matrix_inverse, lu_reconstruct,  # noqa: F401
                                             lu_solve, sqrtm, tridiagonal_matmul,
                                             tridiagonal_solve)
from tensorweave.ops.linalg_special_ops import eigh_tridiagonal, expm  # noqa: F401
from tensorweave import linalg_experimental as experimental  # noqa: F401,E402
from tensorweave.ops.linear_operator import (LinearOperator, LinearOperatorFullMatrix,  # noqa: F401
                                             LinearOperatorLowerTriangular)
from tensorweave.ops.linear_operator_diag import (LinearOperatorDiag,  # noqa: F401
                                                  LinearOperatorIdentity,
                                                  LinearOperatorScaledIdentity)
from tensorweave.ops.linear_operator_compose import (  # noqa: F401
    LinearOperatorAdjoint, LinearOperatorBlockDiag, LinearOperatorBlockLowerTriangular,
    LinearOperatorComposition, LinearOperatorInversion, LinearOperatorKronecker)
from tensorweave.ops.linear_operator_structured import (  # noqa: F401
    LinearOperatorCirculant, LinearOperatorCirculant2D, LinearOperatorCirculant3D,
    LinearOperatorHouseholder, LinearOperatorLowRankUpdate, LinearOperatorPermutation,
    LinearOperatorToeplitz, LinearOperatorTridiag, LinearOperatorZeros)
