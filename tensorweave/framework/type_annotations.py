"""`tf.types.experimental`'s annotations: TensorLike, the Union of what ops accept as a
tensor argument (for type hints), and FunctionType, the signature of a traced function (an
inspect.Signature whose parameters may carry a TypeSpec as annotation)."""
import inspect
import typing

import numpy as np

from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.protos.graph_pb2 import TensorProto
from tensorweave.framework.sparse_tensor import SparseTensor

TensorLike = typing.Union[Tensor, IndexedSlices, SparseTensor, TensorProto, np.ndarray,
                          np.number, list, tuple, int, float, bool, complex, str, bytes]


class FunctionType(inspect.Signature):
    """A function's parameters (inspect.Parameter, annotation = a TypeSpec or a Python value
    type) and return annotation; `from_callable(fn)` reads a Python function's."""

    __slots__ = ()

    @classmethod
    def from_callable(cls, obj, *, follow_wrapped=True):
        signature = inspect.signature(obj, follow_wrapped=follow_wrapped)
        return cls(list(signature.parameters.values()),
                   return_annotation=signature.return_annotation)

    def flat_inputs(self):
        """The parameters' annotations, in order (TF's flattened input types)."""
        return [p.annotation for p in self.parameters.values()]
