"""`tf.data.experimental.make_saveable_from_iterator(iterator)`: a saveable (the Saver's
protocol for non-variables) holding the iterator's position, so that
`tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, saveable)` makes a tf.train.Saver
checkpoint the input pipeline with the model and restore it where it stood (by replaying the
input: ops/iterator_state_ops.py)."""
from tensorweave.framework import graph as graph_lib


class _StateSpec:
    def __init__(self, tensor, name):
        self.tensor, self.name, self.slice_spec, self.dtype = tensor, name, "", tensor.dtype


class _IteratorSaveable:
    def __init__(self, handle, dataset_key, arguments, name):
        from tensorweave.ops import iterator_state_ops
        self._ops = iterator_state_ops
        self._handle, self._dataset_key, self._arguments = handle, dataset_key, arguments
        with graph_lib.get_default_graph().colocate_with(handle.op):
            state = iterator_state_ops.serialize_iterator(handle)
        self.specs = [_StateSpec(state, name)]
        self.name, self.op = name, handle.op

    def restore(self, restored_tensors, restored_shapes=None):
        with graph_lib.get_default_graph().colocate_with(self._handle.op):
            return self._ops.deserialize_iterator(self._handle, restored_tensors[0],
                                                  self._dataset_key, self._arguments)


def make_saveable_from_iterator(iterator, external_state_policy=None):
    """A saveable of `iterator` (made by make_one_shot_iterator or
    make_initializable_iterator); `external_state_policy` is accepted for TF's signature."""
    handle = iterator._as_graph_element()
    if handle.op.type == "OneShotIterator":
        dataset_key, arguments = handle.op.get_attr("dataset"), []
    else:
        initializer = getattr(iterator, "_initializer", None)
        if initializer is None:
            raise ValueError("make_saveable_from_iterator: the iterator has no initializer "
                             "(from_structure / from_string_handle): its dataset is unknown; "
                             "use make_one_shot_iterator or make_initializable_iterator")
        dataset_key, arguments = initializer.get_attr("dataset"), list(initializer.inputs[1:])
    return _IteratorSaveable(handle, dataset_key, arguments, handle.op.name + "-state")
