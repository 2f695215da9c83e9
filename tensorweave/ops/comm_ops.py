"""Communication ops: _Send and _Recv, the two ends of a cross-device edge.

Users never build them: the partitioner (runtime/partition.py) cuts every edge between ops on
different devices into a _Send on the producer's device and a _Recv on the consumer's, both
named by the same rendezvous key (send device, recv device, tensor name; the step id is added
when the step runs). They are registered here like any op so that a partition can be written
as a GraphDef, shipped to the worker that owns its device, and imported there.
"""
from tensorweave.framework import common_shapes
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable

_ENDPOINT_ATTRS = {"tensor_name": "string", "send_device": "string",
                   "send_device_incarnation": ("int", 0), "recv_device": "string",
                   "client_terminated": ("bool", False)}

register_op("_Send", inputs=["tensor: T"], attrs=dict(_ENDPOINT_ATTRS, T="type"),
            shape_fn=common_shapes.no_outputs, stateful=True,
            doc="Leaves `tensor` in the step's rendezvous under its key.")
register_op("_Recv", outputs=["tensor: tensor_type"],
            attrs=dict(_ENDPOINT_ATTRS, tensor_type="type"),
            shape_fn=common_shapes.unknown_outputs, stateful=True,
            doc="Waits for the tensor sent under its key in this step and outputs it.")
# The gradient of a partitioned graph is partitioned again; no gradient crosses a Send/Recv.
not_differentiable("_Send")
not_differentiable("_Recv")
