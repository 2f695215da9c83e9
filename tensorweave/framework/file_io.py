"""`tf.gfile` / `tf.io.gfile` on local files: GFile and the file-system functions, raising
TF's error classes (NotFoundError, AlreadyExistsError, PermissionDeniedError, ...) instead of
OSError, as TF scripts expect.

Paths may be str, bytes or path-like, with or without a `file://` prefix; other schemes (gs://,
hdfs://, s3://) raise UnimplementedError. GFile opens its file on first use, as TF's does (a
missing file fails on the first read, not at construction); `read(n)` counts bytes and returns
str in text mode, bytes in "b" mode; `write` takes either.
"""
import contextlib
import glob as glob_lib
import os
import shutil

from tensorweave.framework import compat
from tensorweave.framework import errors

_ERRORS = ((FileNotFoundError, errors.NotFoundError),
           (FileExistsError, errors.AlreadyExistsError),
           (PermissionError, errors.PermissionDeniedError),
           (IsADirectoryError, errors.FailedPreconditionError),
           (NotADirectoryError, errors.FailedPreconditionError))


@contextlib.contextmanager
def _tf_errors(what, path):
    try:
        yield
    except OSError as exc:
        for os_error, tf_error in _ERRORS:
            if isinstance(exc, os_error):
                raise tf_error(None, None, f"{what} {path}: {exc.strerror}") from None
        raise errors.UnknownError(None, None, f"{what} {path}: {exc}") from None


# The schemes _local accepts: "" (a plain local path) and "file" (file://...).
REGISTERED_SCHEMES = ("", "file")


def get_registered_schemes():
    """The URI schemes the file API accepts here: '' (plain local paths) and 'file'
    (file:// URIs); others (gs://, hdfs://, s3://) raise UnimplementedError."""
    return list(REGISTERED_SCHEMES)


def _local(path):
    path = compat.as_str_any(compat.path_to_str(path))
    if path.startswith("file://"):
        return path[len("file://"):]
    if "://" in path:
        raise errors.UnimplementedError(None, None, f"File system scheme "
                                        f"'{path.split('://')[0]}' is not implemented: only "
                                        f"local paths are ({path})")
    return path


class GFile:
    """A file: `with GFile(path, "w") as f: f.write(...)`; iterate for its lines."""

    def __init__(self, name, mode="r"):
        if mode.replace("b", "").replace("+", "") not in ("r", "w", "a"):
            raise errors.InvalidArgumentError(None, None, f"GFile mode must be r, w or a "
                                              f"(with b and +), got {mode!r}")
        self._name = compat.path_to_str(name)
        self._path = _local(name)
        self._mode = mode
        self._binary = "b" in mode
        self._handle = None

    @property
    def name(self):
        return self._name

    @property
    def mode(self):
        return self._mode

    def _file(self):
        if self._handle is None:
            mode = self._mode.replace("b", "") + "b"
            with _tf_errors("Cannot open", self._path):
                self._handle = open(self._path, mode)
        return self._handle

    def _check_mode(self, reading):
        readable = "r" in self._mode or "+" in self._mode
        writable = "r" not in self._mode or "+" in self._mode
        if (reading and not readable) or (not reading and not writable):
            raise errors.PermissionDeniedError(
                None, None, f"{self._path} is open with mode {self._mode!r}, not for "
                f"{'reading' if reading else 'writing'}")

    def _out(self, data):
        return data if self._binary else compat.as_str_any(data)

    def size(self):
        return stat(self._path).length

    def read(self, n=-1):
        """`n` bytes (all with -1), as str in text mode."""
        self._check_mode(reading=True)
        with _tf_errors("Cannot read", self._path):
            return self._out(self._file().read(-1 if n is None else n))

    def readline(self):
        self._check_mode(reading=True)
        with _tf_errors("Cannot read", self._path):
            return self._out(self._file().readline())

    def readlines(self):
        self._check_mode(reading=True)
        with _tf_errors("Cannot read", self._path):
            return [self._out(line) for line in self._file().readlines()]

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def write(self, file_content):
        self._check_mode(reading=False)
        with _tf_errors("Cannot write", self._path):
            self._file().write(compat.as_bytes(file_content))

    def seek(self, offset=None, whence=0, position=None):
        """Moves to `offset` (`position` is the old name of the same argument)."""
        if position is not None:
            if offset is not None:
                raise TypeError("seek: give offset or position, not both")
            offset = position
        with _tf_errors("Cannot seek in", self._path):
            self._file().seek(offset or 0, whence)

    def tell(self):
        return self._file().tell()

    def flush(self):
        if self._handle is not None:
            self._handle.flush()

    def close(self):
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def seekable(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class FileStatistics:
    """What `stat` reports: length in bytes, modification time in ns, is_directory."""

    def __init__(self, length=None, mtime_nsec=None, is_directory=None):
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory


def exists(path):
    return os.path.exists(_local(path))


def isdir(path):
    return os.path.isdir(_local(path))


def stat(path):
    local = _local(path)
    with _tf_errors("Cannot stat", local):
        info = os.stat(local)
    return FileStatistics(info.st_size, info.st_mtime_ns, os.path.isdir(local))


def makedirs(path):
    """Creates `path` and its missing parents; an existing directory is fine."""
    local = _local(path)
    with _tf_errors("Cannot create directory", local):
        os.makedirs(local, exist_ok=True)


def mkdir(path):
    """Creates one directory: AlreadyExistsError if it exists, NotFoundError without parent."""
    local = _local(path)
    with _tf_errors("Cannot create directory", local):
        os.mkdir(local)


def listdir(path):
    """The names in directory `path` (unsorted, as the file system gives them)."""
    local = _local(path)
    if not os.path.isdir(local):
        raise errors.NotFoundError(None, None, f"Could not find directory {local}")
    with _tf_errors("Cannot list", local):
        return os.listdir(local)


def glob(pattern):
    """The paths matching a pattern (or any of a list of patterns)."""
    patterns = [pattern] if isinstance(pattern, (str, bytes)) or hasattr(
        pattern, "__fspath__") else list(pattern)
    found = []
    for item in patterns:
        found.extend(glob_lib.glob(_local(item)))
    return found


def remove(path):
    local = _local(path)
    with _tf_errors("Cannot delete", local):
        os.remove(local)


def rmtree(path):
    local = _local(path)
    if not os.path.exists(local):
        raise errors.NotFoundError(None, None, f"Cannot delete {local}: no such directory")
    with _tf_errors("Cannot delete", local):
        if os.path.isdir(local):
            shutil.rmtree(local)
        else:
            os.remove(local)


def _refuse_existing(target, overwrite, what):
    if not overwrite and os.path.exists(target):
        raise errors.AlreadyExistsError(None, None, f"{what}: {target} exists; pass "
                                        "overwrite=True to replace it")


def copy(src, dst, overwrite=False):
    source, target = _local(src), _local(dst)
    _refuse_existing(target, overwrite, "copy")
    with _tf_errors("Cannot copy", f"{source} to {target}"):
        shutil.copyfile(source, target)


def rename(src, dst, overwrite=False):
    source, target = _local(src), _local(dst)
    _refuse_existing(target, overwrite, "rename")
    with _tf_errors("Cannot rename", f"{source} to {target}"):
        os.replace(source, target)


def walk(top, topdown=True, onerror=None):
    """(directory, subdirectory names, file names) for `top` and every directory below it;
    nothing for a `top` that does not exist."""
    local = _local(top)
    for dirpath, dirnames, filenames in os.walk(local, topdown=topdown, onerror=onerror):
        yield dirpath, dirnames, filenames


def join(path, *paths):
    return os.path.join(compat.path_to_str(path), *[compat.path_to_str(p) for p in paths])


def walk_v1(top, in_order=True):
    """`tf.gfile.Walk`: `walk` with TF 1.x's argument name (in_order: parents first)."""
    return walk(top, topdown=in_order)
