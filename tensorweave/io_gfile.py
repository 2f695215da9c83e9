"""`tf.io.gfile` (reached as `tf.io.gfile`): the file API on local paths with TF 2 style names
(framework/file_io.py). Re-exports only."""
from tensorweave.framework.file_io import (GFile, exists, isdir, stat, makedirs,  # noqa: F401
                                           mkdir, listdir, glob, remove, rmtree, copy,
                                           rename, walk, join,
                                           get_registered_schemes)
