"""SerializeIterator / DeserializeIterator: an iterator's position as a string tensor, so
that a Saver checkpoints where the input pipeline stands
(tf.data.experimental.make_saveable_from_iterator, data/iterator_saveable.py).

The state is (started, number of elements handed out since the iterator was last started);
restoring restarts the iterator on its dataset (`dataset` attr, with the dataset's captured
tensors as `arguments`) and reads that many elements past, so it resumes exactly where it was
for a deterministic pipeline (seeded shuffles included) at the cost of replaying the input.
"""
from tensorweave.framework import tensor_shape
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op

register_op("SerializeIterator", inputs=["resource_handle: string"],
            outputs=["serialized: string"], shape_fn=lambda op: [tensor_shape.TensorShape([])],
            stateful=True)
register_op("DeserializeIterator", inputs=["resource_handle: string", "serialized: string",
                                           "arguments: Targuments"],
            attrs={"dataset": "string", "Targuments": ("list(type)", [])},
            shape_fn=lambda op: [], stateful=True)
not_differentiable("SerializeIterator")
not_differentiable("DeserializeIterator")


def serialize_iterator(handle, name=None):
    return make_op("SerializeIterator", [handle], {}, name or "SerializeIterator").outputs[0]


def deserialize_iterator(handle, serialized, dataset_key, arguments=(), name=None):
    return make_op("DeserializeIterator", [handle, serialized, list(arguments)],
                   {"dataset": dataset_key}, name or "DeserializeIterator")
