"""`tf.LMDBReader`: a queue-fed reader whose work units are LMDB data files
(kernels/lmdb_reader.py); read() gives each (key, value) of their main database in key
order, like the other readers (reader_ops.py)."""
from tensorweave.framework import common_shapes
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.reader_ops import ReaderBase, _reader

register_op("LMDBReader", outputs=["reader_handle: string"],
            attrs={"container": ("string", ""), "shared_name": ("string", "")},
            shape_fn=common_shapes.scalar, stateful=True)
not_differentiable("LMDBReader")


class LMDBReader(ReaderBase):
    def __init__(self, name=None, options=None):
        super().__init__(_reader("LMDBReader", name or "LMDBReader", {}))
