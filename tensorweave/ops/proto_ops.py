"""`tf.io.decode_proto` / `tf.io.encode_proto`: fields of serialized protocol buffer messages
as tensors, and back (kernels/proto_ops.py). A field gives a count per message (`sizes`) and
its values padded with the field's default to the batch's largest count; a sub-message field
is its serialized bytes. The message type is looked up in this process's protobuf pool
('local://', where every imported *_pb2 module registers its messages), in a serialized
FileDescriptorSet ('bytes://...'), or in a FileDescriptorSet file (read under the file-access
policy, as every file-reading op)."""
from tensorweave.framework import dtypes, tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op

_PROTO_ATTRS = {"message_type": "string", "field_names": "list(string)",
                "descriptor_source": ("string", "local://")}


def _decode_shapes(op):
    batch = op.inputs[0].shape
    count = len(op.get_attr("field_names"))
    if batch.ndims is None:
        return [tensor_shape.unknown_shape()] * (count + 1)
    return ([batch.concatenate([count])] +
            [batch.concatenate([None]) for _ in op.get_attr("output_types")])


register_op("DecodeProtoV2", inputs=["bytes: string"],
            outputs=["sizes: int32", "values: output_types"],
            attrs=dict(_PROTO_ATTRS, output_types="list(type)",
                       message_format=("string", "binary"), sanitize=("bool", False)),
            shape_fn=_decode_shapes,
            doc="Fields of serialized messages: per-message counts and padded values.")
register_op("EncodeProto", inputs=["sizes: int32", "values: Tinput_types"],
            outputs=["bytes: string"],
            attrs=dict(_PROTO_ATTRS, Tinput_types="list(type)"),
            shape_fn=lambda op: [tensor_shape.TensorShape(op.inputs[0].shape.dims[:-1])
                                 if op.inputs[0].shape.ndims else
                                 tensor_shape.unknown_shape()],
            doc="Serialized messages made from per-message field counts and values.")
not_differentiable("DecodeProtoV2")
not_differentiable("EncodeProto")


def decode_proto(bytes, message_type, field_names, output_types,  # noqa: A002 - TF's name
                 descriptor_source="local://", message_format="binary", sanitize=False,
                 name=None):
    """(sizes, values) of `field_names` in each serialized `message_type` of `bytes`."""
    if message_format not in ("binary", "text"):
        raise ValueError(f"decode_proto: message_format must be 'binary' or 'text', got "
                         f"{message_format!r}")
    field_names, output_types = list(field_names), [dtypes.as_dtype(t) for t in output_types]
    if len(field_names) != len(output_types):
        raise ValueError(f"decode_proto: {len(field_names)} field_names but "
                         f"{len(output_types)} output_types")
    op = make_op("DecodeProtoV2", [convert_to_tensor(bytes, dtype=dtypes.string)],
                 {"message_type": message_type, "field_names": field_names,
                  "output_types": output_types, "descriptor_source": descriptor_source,
                  "message_format": message_format, "sanitize": bool(sanitize)},
                 name=name or "DecodeProtoV2")
    return op.outputs[0], list(op.outputs[1:])


def encode_proto(sizes, values, field_names, message_type, descriptor_source="local://",
                 name=None):
    """Serialized `message_type`s whose field i has sizes[..., i] values from values[i]."""
    values = [convert_to_tensor(v) for v in values]
    field_names = list(field_names)
    if len(field_names) != len(values):
        raise ValueError(f"encode_proto: {len(field_names)} field_names but {len(values)} "
                         "values")
    op = make_op("EncodeProto", [convert_to_tensor(sizes, dtype=dtypes.int32), values],
                 {"message_type": message_type, "field_names": field_names,
                  "descriptor_source": descriptor_source}, name=name or "EncodeProto")
    return op.outputs[0]
