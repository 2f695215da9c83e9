"""tf.load_op_library / tf.load_library / tf.load_file_system_library.

TensorFlow's custom ops and file systems are C++ shared libraries built against TF's headers
and ABI; tensorweave has no C++ runtime to load them into, so these never load anything. A
missing path is NotFoundError naming it (as TF); an existing one is UnimplementedError naming
the file and saying how an op is added here instead: register its signature with
tensorweave.framework.op_def.register_op and a NumPy kernel with
tensorweave.kernels.registry.register_kernel (a file system: tf.io.gfile's registry).
"""
import os

from tensorweave.framework import errors

_HOW = ("tensorweave runs ops as Python/NumPy kernels and cannot load TensorFlow C++ "
        "libraries: register the op with tensorweave.framework.op_def.register_op and its "
        "kernel with tensorweave.kernels.registry.register_kernel instead")


def _refuse(path, what):
    path = os.fspath(path)
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{what}: {path}: No such file or directory")
    raise errors.UnimplementedError(None, None, f"{what}({path!r}): {_HOW}")


def load_op_library(library_filename):
    _refuse(library_filename, "tf.load_op_library")


def load_library(library_location):
    _refuse(library_location, "tf.load_library")


def load_file_system_library(library_filename):
    _refuse(library_filename, "tf.load_file_system_library")
