"""`tf.sysconfig`: build facts of this package, honestly.

tensorweave is pure Python over NumPy: there is no C++ library to compile custom ops against
or to link with. get_include() and get_lib() name the installed package directory (it holds
the .proto files of the GraphDef and wire formats, under framework/protos and
distributed/protos); get_compile_flags() gives that include path and the ABI macro TF
programs parse; get_link_flags() is empty (nothing to link); CXX_VERSION is 0 (no C++ build).
Custom ops are Python here: see tf.load_op_library.
"""
import os
import platform
import sys

import numpy as np

from tensorweave.version import VERSION

CXX11_ABI_FLAG = 0
CXX_VERSION = 0
MONOLITHIC_BUILD = 0
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def get_include():
    return _PACKAGE_DIR


def get_lib():
    return _PACKAGE_DIR


def get_compile_flags():
    return [f"-I{get_include()}", f"-D_GLIBCXX_USE_CXX11_ABI={CXX11_ABI_FLAG}"]


def get_link_flags():
    return []


def get_build_info():
    """TF's build facts (no CUDA, ROCm or TensorRT here) plus what this build runs on."""
    return {"is_cuda_build": False, "is_rocm_build": False, "is_tensorrt_build": False,
            "cuda_version": None, "cudnn_version": None, "cpu_compiler": None,
            "tensorflow_api_version": VERSION, "python_version": platform.python_version(),
            "numpy_version": np.__version__, "platform": sys.platform,
            "package_dir": _PACKAGE_DIR}
