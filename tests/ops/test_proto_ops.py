"""tf.io.decode_proto / encode_proto against the protobuf runtime itself: messages of a type
described by a FileDescriptorSet (given as bytes:// and as a file) and of the project's own
types (local://), padded values and sizes, round trips, and clear errors."""
import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

import tensorweave as tf

COVERED_OP_TYPES = {"DecodeProtoV2", "EncodeProto"}
F = descriptor_pb2.FieldDescriptorProto


def _descriptor_set():
    files = descriptor_pb2.FileDescriptorSet()
    proto = files.file.add(name="probe.proto", package="probe", syntax="proto3")
    inner = proto.message_type.add(name="Inner")
    inner.field.add(name="v", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    color = proto.enum_type.add(name="Color")
    color.value.add(name="RED", number=0)
    color.value.add(name="BLUE", number=2)
    rec = proto.message_type.add(name="Record")
    for name, number, kind, label, extra in (
            ("ids", 1, F.TYPE_INT32, F.LABEL_REPEATED, {}),
            ("name", 2, F.TYPE_STRING, F.LABEL_OPTIONAL, {}),
            ("score", 3, F.TYPE_DOUBLE, F.LABEL_OPTIONAL, {"proto3_optional": True}),
            ("flags", 4, F.TYPE_BOOL, F.LABEL_REPEATED, {}),
            ("big", 5, F.TYPE_UINT64, F.LABEL_OPTIONAL, {}),
            ("color", 6, F.TYPE_ENUM, F.LABEL_OPTIONAL, {"type_name": ".probe.Color"}),
            ("inner", 7, F.TYPE_MESSAGE, F.LABEL_REPEATED, {"type_name": ".probe.Inner"})):
        field = rec.field.add(name=name, number=number, type=kind, label=label, **extra)
        if extra.get("proto3_optional"):
            field.oneof_index = len(rec.oneof_decl)
            rec.oneof_decl.add(name="_" + name)
    return files


def _record_class(files):
    pool = descriptor_pool.DescriptorPool()
    for proto in files.file:
        pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("probe.Record")), \
        message_factory.GetMessageClass(pool.FindMessageTypeByName("probe.Inner"))


FIELDS = ["ids", "name", "score", "flags", "big", "color", "inner"]
TYPES = [tf.int32, tf.string, tf.float64, tf.bool, tf.int64, tf.int32, tf.string]


def test_decode_matches_the_protobuf_runtime_and_encode_round_trips(tmp_path):
    files = _descriptor_set()
    record, inner = _record_class(files)
    messages = [record(ids=[3, 1, 4], name="pi", score=3.14, flags=[True], big=2 ** 40,
                       color=2, inner=[inner(v=7), inner(v=8)]),
                record(name="empty"),
                record(ids=[9], score=0.0, flags=[False, True, True])]
    data = np.array([m.SerializeToString() for m in messages], dtype=object).reshape(3, 1)
    source = b"bytes://" + files.SerializeToString()
    path = tmp_path / "probe.desc"
    path.write_bytes(files.SerializeToString())
    with tf.Graph().as_default():
        sizes, values = tf.io.decode_proto(data, "probe.Record", FIELDS, TYPES,
                                           descriptor_source=source)
        assert sizes.shape.as_list() == [3, 1, 7] and values[0].shape.as_list() == [3, 1, None]
        from_file = tf.io.decode_proto(data, "probe.Record", ["ids"], [tf.int32],
                                       descriptor_source=str(path))
        encoded = tf.io.encode_proto(sizes, values, FIELDS, "probe.Record",
                                     descriptor_source=source)
        with tf.Session() as sess:
            s, v, f, e = sess.run([sizes, values, from_file, encoded])
    np.testing.assert_array_equal(s[:, 0], [[3, 1, 1, 1, 1, 1, 2], [0, 1, 0, 0, 0, 0, 0],
                                            [1, 0, 1, 3, 0, 0, 0]])
    np.testing.assert_array_equal(v[0][:, 0], [[3, 1, 4], [0, 0, 0], [9, 0, 0]])
    assert v[1][:, 0, 0].tolist() == [b"pi", b"empty", b""]
    np.testing.assert_array_equal(v[2][:, 0, 0], [3.14, 0.0, 0.0])
    np.testing.assert_array_equal(v[3][2, 0], [False, True, True])
    assert v[4][0, 0, 0] == 2 ** 40 and v[5][0, 0, 0] == 2
    assert [inner.FromString(b).v for b in v[6][0, 0]] == [7, 8]
    np.testing.assert_array_equal(f[1][0][:, 0], v[0][:, 0])
    for got, want in zip(e.reshape(-1), messages):
        assert record.FromString(got) == want


def test_local_pool_types_and_text_format():
    example = tf.train.Example(features=tf.train.Features(feature={
        "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}))
    value = tf.Summary.Value(tag="loss", simple_value=0.5)
    with tf.Graph().as_default():
        sizes, (features,) = tf.io.decode_proto([example.SerializeToString()],
                                                "tensorflow.Example", ["features"],
                                                [tf.string])
        text_sizes, (tags,) = tf.io.decode_proto([str(value)], "tensorweave.Summary.Value",
                                                 ["tag"], [tf.string], message_format="text")
        with tf.Session() as sess:
            s, f, ts, t = sess.run([sizes, features, text_sizes, tags])
    assert s.tolist() == [[1]] and tf.train.Features.FromString(f[0, 0]) == example.features
    assert ts.tolist() == [[1]] and t.tolist() == [[b"loss"]]


def test_bad_requests_name_the_problem():
    files = _descriptor_set()
    record, _ = _record_class(files)
    source = b"bytes://" + files.SerializeToString()
    good = record(ids=[1]).SerializeToString()
    with tf.Graph().as_default(), tf.Session() as sess:
        cases = [
            (tf.io.decode_proto([good], "probe.Nope", ["ids"], [tf.int32],
                                descriptor_source=source), "no message type 'probe.Nope'"),
            (tf.io.decode_proto([good], "probe.Record", ["nope"], [tf.int32],
                                descriptor_source=source), "no field 'nope'"),
            (tf.io.decode_proto([good], "probe.Record", ["name"], [tf.int32],
                                descriptor_source=source), "cannot be read as int32"),
            (tf.io.decode_proto([b"\xff\xff\xff"], "probe.Record", ["ids"], [tf.int32],
                                descriptor_source=source), "not a valid probe.Record"),
            (tf.io.encode_proto([[2]], [[[1.0, 2.0]]], ["score"], "probe.Record",
                                descriptor_source=source), "not repeated but has size 2"),
            (tf.io.encode_proto([[5]], [[[1, 2]]], ["ids"], "probe.Record",
                                descriptor_source=source), "outside"),
        ]
        for fetch, message in cases:
            with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.DataLossError),
                               match=message):
                sess.run(fetch)
    with pytest.raises(ValueError, match="2 field_names but 1 output_types"):
        tf.io.decode_proto([good], "probe.Record", ["ids", "name"], [tf.int32])
