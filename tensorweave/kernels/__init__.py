"""L1 compute: NumPy kernels, one module per op family, and the kernel table (registry.py).

Every family module is listed here; tests/test_architecture.py checks that every registered op
type has a kernel, so a family missing from this list fails loudly.
"""
from tensorweave.kernels import array, control_flow, math, nn, random, state, training  # noqa: F401
from tensorweave.kernels import activation, conv, conv_input_grad  # noqa: F401
from tensorweave.kernels import dataset, parsing  # noqa: F401
from tensorweave.kernels import indexing  # noqa: F401
from tensorweave.kernels import debug  # noqa: F401
from tensorweave.kernels import comm  # noqa: F401
from tensorweave.kernels import data_flow  # noqa: F401
from tensorweave.kernels import io  # noqa: F401
from tensorweave.kernels import readers  # noqa: F401
from tensorweave.kernels import summary  # noqa: F401
from tensorweave.kernels import linalg  # noqa: F401
from tensorweave.kernels import conv3d  # noqa: F401
from tensorweave.kernels import random_sampling  # noqa: F401
from tensorweave.kernels import training_sparse  # noqa: F401
from tensorweave.kernels import image_resize  # noqa: F401
from tensorweave.kernels import image_color  # noqa: F401
from tensorweave.kernels import image_boxes  # noqa: F401
from tensorweave.kernels import image_crop  # noqa: F401
from tensorweave.kernels import image_codec  # noqa: F401
from tensorweave.kernels import sparse  # noqa: F401
from tensorweave.kernels import candidate_sampling  # noqa: F401
from tensorweave.kernels import strings  # noqa: F401
from tensorweave.kernels import unicode  # noqa: F401
from tensorweave.kernels import sparse_cross  # noqa: F401
from tensorweave.kernels import string_hash  # noqa: F401
from tensorweave.kernels import script  # noqa: F401
from tensorweave.kernels import segment, special_math  # noqa: F401
from tensorweave.kernels import space  # noqa: F401
from tensorweave.kernels import special_functions  # noqa: F401
from tensorweave.kernels import spectral  # noqa: F401
from tensorweave.kernels import image_transform  # noqa: F401
from tensorweave.kernels import sets  # noqa: F401
from tensorweave.kernels import array_extra  # noqa: F401
from tensorweave.kernels import ctc  # noqa: F401
from tensorweave.kernels import sparse_serialization  # noqa: F401
from tensorweave.kernels import collective  # noqa: F401
from tensorweave.kernels import tensor_array  # noqa: F401
from tensorweave.kernels import stateless_random, stateless_sampling  # noqa: F401
from tensorweave.kernels import sequence  # noqa: F401
from tensorweave.kernels import rnn  # noqa: F401
from tensorweave.kernels import rnn_gru  # noqa: F401
from tensorweave.kernels import rnn_keras  # noqa: F401
from tensorweave.kernels import misc  # noqa: F401
from tensorweave.kernels import scatter  # noqa: F401
from tensorweave.kernels import fake_quant  # noqa: F401
from tensorweave.kernels import audio  # noqa: F401
from tensorweave.kernels import lookup, lookup_dense  # noqa: F401
from tensorweave.kernels import compat_more  # noqa: F401
from tensorweave.kernels import random_gamma  # noqa: F401
from tensorweave.kernels import linalg_more  # noqa: F401
from tensorweave.kernels import clustering, proto_ops, tensor_forest  # noqa: F401
from tensorweave.kernels import quantize, quantized_nn  # noqa: F401
from tensorweave.kernels import function_call  # noqa: F401
from tensorweave.kernels import session_state  # noqa: F401
from tensorweave.kernels import fractional_pool  # noqa: F401
from tensorweave.kernels import index_shuffle  # noqa: F401
from tensorweave.kernels import pinned_memory, tpu, user_ops  # noqa: F401
from tensorweave.kernels import fingerprint128, iterator_state, sdca  # noqa: F401
from tensorweave.kernels import batching, lmdb_reader  # noqa: F401
from tensorweave.kernels import fused  # noqa: F401
