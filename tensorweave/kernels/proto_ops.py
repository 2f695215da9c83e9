"""Kernels of DecodeProtoV2 and EncodeProto (ops/proto_ops.py), with the protobuf runtime's
reflection: a message class per descriptor, fields read and written by name."""
import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf.descriptor import FieldDescriptor as FD

from tensorweave.framework import errors
from tensorweave.kernels import file_access
from tensorweave.kernels.registry import register_kernel

_INT32 = (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32, FD.TYPE_ENUM)
_INT64 = (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64)
_UINT = (FD.TYPE_UINT32, FD.TYPE_FIXED32, FD.TYPE_UINT64, FD.TYPE_FIXED64)
_FLOAT = (FD.TYPE_FLOAT, FD.TYPE_DOUBLE)
_BYTES = (FD.TYPE_STRING, FD.TYPE_BYTES, FD.TYPE_MESSAGE, FD.TYPE_GROUP)
_pools = {}


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _pool(source, what):
    raw = source if isinstance(source, bytes) else str(source).encode("utf-8",
                                                                      "surrogateescape")
    if raw == b"local://":
        return descriptor_pool.Default()
    if raw not in _pools:
        if raw.startswith(b"bytes://"):
            data = raw[len(b"bytes://"):]
        else:
            data = file_access.read_input(raw.decode(), what)
        files = descriptor_pb2.FileDescriptorSet()
        try:
            files.ParseFromString(data)
        except Exception:  # noqa: BLE001 - any parse failure is the same user error
            raise errors.InvalidArgumentError(None, None, f"{what}: descriptor_source is not "
                                              "a serialized FileDescriptorSet") from None
        pool = descriptor_pool.DescriptorPool()
        for proto in files.file:
            pool.Add(proto)
        _pools[raw] = pool
    return _pools[raw]


def _message_class(source, message_type, what):
    pool, name = _pool(source, what), _text(message_type)
    for candidate in (name, "tensorweave." + name.split(".", 1)[1]
                      if name.startswith("tensorflow.") else None):
        if candidate is None:
            continue
        try:
            return message_factory.GetMessageClass(pool.FindMessageTypeByName(candidate))
        except KeyError:
            continue
    where = "this process's pool (is its *_pb2 module imported?)" if pool is \
        descriptor_pool.Default() else "the given descriptor_source"
    raise errors.InvalidArgumentError(None, None, f"{what}: no message type {name!r} in "
                                      f"{where}")


def _field(cls, name, what):
    field = cls.DESCRIPTOR.fields_by_name.get(_text(name))
    if field is None:
        raise errors.InvalidArgumentError(None, None, f"{what}: {cls.DESCRIPTOR.full_name} has "
                                          f"no field {_text(name)!r}")
    return field


def _check_type(field, dtype, what):
    kind = dtype.name
    ok = ((field.type in _INT32 and kind in ("int32", "int64")) or
          (field.type in _INT64 and kind == "int64") or
          (field.type in _UINT and kind in ("int64", "uint32", "uint64")) or
          (field.type in _FLOAT and kind in ("float32", "float64")) or
          (field.type == FD.TYPE_BOOL and kind == "bool") or
          (field.type in _BYTES and kind == "string"))
    if not ok:
        raise errors.InvalidArgumentError(None, None, f"{what}: field {field.name!r} cannot be "
                                          f"read as {kind}")


def _repeated(field):
    repeated = getattr(field, "is_repeated", None)      # protobuf >= 6.31 (label is gone)
    return repeated if repeated is not None else field.label == FD.LABEL_REPEATED


def _values(message, field):
    if _repeated(field):
        values = list(getattr(message, field.name))
    elif field.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
        values = [getattr(message, field.name)] if message.HasField(field.name) else []
    elif field.has_presence:
        values = [getattr(message, field.name)] if message.HasField(field.name) else []
    else:   # proto3 scalars: present when not the default
        value = getattr(message, field.name)
        values = [value] if value != field.default_value else []
    if field.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
        values = [v.SerializeToString() for v in values]
    elif field.type == FD.TYPE_STRING:
        values = [v.encode() for v in values]
    return values


def _default(field):
    if field.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
        return b""
    if _repeated(field):
        return {FD.TYPE_STRING: b"", FD.TYPE_BYTES: b"", FD.TYPE_BOOL: False}.get(field.type, 0)
    value = field.default_value
    return value.encode() if isinstance(value, str) else value


@register_kernel("DecodeProtoV2")
def decode_proto(data, *, message_type, field_names, output_types, descriptor_source,
                 message_format, sanitize):
    what = "DecodeProtoV2"
    cls = _message_class(descriptor_source, message_type, what)
    fields = [_field(cls, name, what) for name in field_names]
    for field, dtype in zip(fields, output_types):
        _check_type(field, dtype, what)
    data = np.asarray(data, dtype=object)
    flat = data.reshape(-1)
    decoded = []
    for index, raw in enumerate(flat.tolist()):
        message = cls()
        try:
            if _text(message_format) == "text":
                text_format.Merge(_text(raw), message)
            else:
                message.ParseFromString(raw)
        except Exception as exc:  # noqa: BLE001 - the message is the user's data
            raise errors.DataLossError(None, None, f"{what}: message {index} is not a valid "
                                       f"{cls.DESCRIPTOR.full_name} ({type(exc).__name__})"
                                       ) from None
        decoded.append([_values(message, field) for field in fields])
    sizes = np.array([[len(v) for v in row] for row in decoded], dtype=np.int32).reshape(
        data.shape + (len(fields),))
    outputs = [sizes]
    for i, (field, dtype) in enumerate(zip(fields, output_types)):
        width = max([len(row[i]) for row in decoded], default=0)
        np_dtype = object if dtype.name == "string" else dtype.np_dtype
        out = np.empty((len(decoded), width), dtype=np_dtype)
        out[...] = _default(field)
        for r, row in enumerate(decoded):
            if row[i]:
                out[r, :len(row[i])] = row[i]
        outputs.append(out.reshape(data.shape + (width,)))
    return tuple(outputs)


def _python_value(field, value):
    if field.type in (FD.TYPE_STRING,):
        return _text(value)
    if field.type == FD.TYPE_BYTES:
        return value
    if field.type == FD.TYPE_BOOL:
        return bool(value)
    if field.type in _FLOAT:
        return float(value)
    return int(value)


@register_kernel("EncodeProto")
def encode_proto(sizes, *values, message_type, field_names, descriptor_source, Tinput_types):  # noqa: N803
    what = "EncodeProto"
    cls = _message_class(descriptor_source, message_type, what)
    fields = [_field(cls, name, what) for name in field_names]
    for field, dtype in zip(fields, Tinput_types):
        _check_type(field, dtype, what)
    sizes = np.asarray(sizes)
    if sizes.ndim < 1 or sizes.shape[-1] != len(fields):
        raise errors.InvalidArgumentError(None, None, f"{what}: sizes must end in a dimension "
                                          f"of {len(fields)} (one per field), got shape "
                                          f"{list(sizes.shape)}")
    batch = sizes.shape[:-1]
    flat_sizes = sizes.reshape(-1, len(fields))
    flat_values = []
    for field, value in zip(fields, values):
        value = np.asarray(value)
        if value.shape[:-1] != batch:
            raise errors.InvalidArgumentError(None, None, f"{what}: values for field "
                                              f"{field.name!r} have shape {list(value.shape)}, "
                                              f"not batch {list(batch)} + [n]")
        flat_values.append(value.reshape(len(flat_sizes), -1 if value.shape[-1] else 0))
    out = np.empty(len(flat_sizes), dtype=object)
    for r in range(len(flat_sizes)):
        message = cls()
        for f, field in enumerate(fields):
            count = int(flat_sizes[r, f])
            if count < 0 or count > flat_values[f].shape[1]:
                raise errors.InvalidArgumentError(None, None, f"{what}: size {count} of field "
                                                  f"{field.name!r} is outside [0, "
                                                  f"{flat_values[f].shape[1]}]")
            if not _repeated(field) and count > 1:
                raise errors.InvalidArgumentError(None, None, f"{what}: field {field.name!r} "
                                                  f"is not repeated but has size {count}")
            items = flat_values[f][r, :count].tolist()
            if field.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
                for item in items:
                    target = getattr(message, field.name).add() \
                        if _repeated(field) else getattr(message, field.name)
                    target.ParseFromString(item)
            elif _repeated(field):
                getattr(message, field.name).extend(_python_value(field, v) for v in items)
            elif items:
                setattr(message, field.name, _python_value(field, items[0]))
        out[r] = message.SerializeToString()
    return out.reshape(batch)
