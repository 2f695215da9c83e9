"""`tensorflow.python.lib.io.file_io`: TF 1.x's file helpers, on the project's gfile."""
import os

from tensorweave.io_gfile import GFile, copy as _copy, exists, glob, isdir, listdir, makedirs, \
    mkdir, remove, rename as _rename, rmtree, stat as _stat, walk as _walk


class FileIO(GFile):
    """A file opened by path and mode ('r', 'w', 'a', 'rb', 'wb', ...)."""

    def __init__(self, name, mode):
        super().__init__(name, mode)


def file_exists(filename):
    return exists(filename)


def read_file_to_string(filename, binary_mode=False):
    with GFile(filename, "rb" if binary_mode else "r") as handle:
        return handle.read()


def write_string_to_file(filename, file_content):
    with GFile(filename, "wb" if isinstance(file_content, bytes) else "w") as handle:
        handle.write(file_content)


def atomic_write_string_to_file(filename, contents, overwrite=True):
    if not overwrite and exists(filename):
        raise FileExistsError(filename)
    temporary = f"{filename}.tmp{os.getpid()}"
    write_string_to_file(temporary, contents)
    os.replace(temporary, filename)


def get_matching_files(filename):
    return glob(filename)


def create_dir(dirname):
    mkdir(dirname)


def recursive_create_dir(dirname):
    makedirs(dirname)


def delete_file(filename):
    remove(filename)


def delete_recursively(dirname):
    rmtree(dirname)


def is_directory(dirname):
    return isdir(dirname)


def list_directory(dirname):
    return listdir(dirname)


def walk(top, in_order=True):
    return _walk(top, topdown=in_order)


def copy(oldpath, newpath, overwrite=False):
    _copy(oldpath, newpath, overwrite)


def rename(oldname, newname, overwrite=False):
    _rename(oldname, newname, overwrite)


def stat(filename):
    return _stat(filename)
