"""IndexedSlices: a sparse set of rows of a dense tensor (the gradient of a gather)."""


class IndexedSlices:
    """`values[i]` is row `indices[i]` of a dense tensor of shape `dense_shape`; rows repeat-add."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def name(self):
        return self._values.name

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def device(self):
        return self._values.device

    @property
    def shape(self):
        from tensorweave.framework import tensor_util, tensor_shape
        if self._dense_shape is None:
            return tensor_shape.unknown_shape()
        return tensor_util.constant_value_as_shape(self._dense_shape)

    def get_shape(self):
        return self.shape

    def __repr__(self):
        return (f"IndexedSlices(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")
