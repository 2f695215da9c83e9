"""TensorBoard event files: FileWriter writes, summary_iterator reads back; the record framing
is checked byte by byte with a CRC-32C computed here, independently of the package."""
import glob
import os
import socket
import struct
import subprocess
import sys
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.protos import summary_pb2

from tests.ops.test_summary_ops import decode_png, reference_histogram

pytestmark = pytest.mark.timeout(60)


def bitwise_crc32c(data):
    """CRC-32C bit by bit (reflected polynomial 0x82F63B78), no tables."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def read_framed_records(path):
    """The records of a TFRecord file, every length and data checksum verified here."""
    with open(path, "rb") as handle:
        data = handle.read()
    records, position = [], 0
    while position < len(data):
        header = data[position:position + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[position + 8:position + 12])
        assert length_crc == masked(bitwise_crc32c(header)), f"length CRC at {position}"
        body = data[position + 12:position + 12 + length]
        (body_crc,) = struct.unpack("<I", data[position + 12 + length:position + 16 + length])
        assert len(body) == length and body_crc == masked(bitwise_crc32c(body)), \
            f"data CRC at {position}"
        records.append(body)
        position += 16 + length
    return records


def only_event_file(logdir):
    files = glob.glob(os.path.join(str(logdir), "*tfevents*"))
    assert len(files) == 1, files
    return files[0]


def test_scalars_histograms_images_and_text_round_trip(tmp_path):
    values = np.random.default_rng(1).normal(0, 3, 200)
    images = np.random.default_rng(2).integers(0, 256, (2, 6, 5, 3)).astype(np.uint8)
    x = tf.placeholder(tf.float64, [None])
    tf.summary.scalar("loss", tf.reduce_mean(x))
    tf.summary.histogram("x", x)
    tf.summary.image("pics", images, max_outputs=2)
    tf.summary.text("note", tf.constant("step note"))
    merged = tf.summary.merge_all()
    with tf.Session() as session, tf.summary.FileWriter(str(tmp_path)) as writer:
        for step in (0, 10, 20):
            writer.add_summary(session.run(merged, {x: values + step}), global_step=step)
    path = only_event_file(tmp_path)
    name = os.path.basename(path)
    assert name.startswith("events.out.tfevents.") and name.endswith("." + socket.gethostname())

    events = list(tf.train.summary_iterator(path))
    assert events[0].file_version == "brain.Event:2" and events[0].wall_time > 0
    summaries = [event for event in events if event.HasField("summary")]
    assert [event.step for event in summaries] == [0, 10, 20]
    for event, step in zip(summaries, (0, 10, 20)):
        by_tag = {value.tag: value for value in event.summary.value}
        assert sorted(by_tag) == ["loss", "note", "pics/image/0", "pics/image/1", "x"]
        assert by_tag["loss"].simple_value == pytest.approx(np.mean(values + step), rel=1e-6)
        histogram = by_tag["x"].histo
        limits, counts = reference_histogram(values + step)
        assert list(histogram.bucket_limit) == limits and list(histogram.bucket) == counts
        assert histogram.num == 200 and histogram.min == (values + step).min()
        assert histogram.sum == pytest.approx((values + step).sum())
        for index in range(2):
            png = by_tag[f"pics/image/{index}"].image.encoded_image_string
            np.testing.assert_array_equal(decode_png(png), images[index])
        assert tf.make_ndarray(by_tag["note"].tensor) == b"step note"
    # TensorBoard needs a tag's plugin metadata once: only the first event keeps it.
    notes = [{v.tag: v for v in e.summary.value}["note"] for e in summaries]
    assert notes[0].metadata.plugin_data.plugin_name == "text"
    assert [note.HasField("metadata") for note in notes] == [True, False, False]


def test_record_framing_checked_with_an_independent_crc32c(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path / "run"))
    summary = tf.Summary(value=[tf.Summary.Value(tag="big", histo=tf.HistogramProto(
        bucket_limit=np.arange(500.0).tolist(), bucket=np.ones(500).tolist()))])
    writer.add_summary(summary, 7)
    writer.add_summary(summary.SerializeToString(), 8)  # the bytes a summary op returns
    writer.close()
    records = read_framed_records(only_event_file(tmp_path / "run"))
    events = [tf.Event.FromString(record) for record in records]
    assert events[0].file_version == "brain.Event:2"
    assert [(event.step, event.summary) for event in events[1:]] == [(7, summary), (8, summary)]
    assert [event for event in tf.train.summary_iterator(only_event_file(tmp_path / "run"))] \
        == events


def test_add_summary_leaves_the_callers_proto_alone(tmp_path):
    summary = tf.Summary(value=[tf.Summary.Value(tag="t", simple_value=1.0, metadata=(
        tf.SummaryMetadata(display_name="T")))])
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(summary, 1)
        writer.add_summary(summary, 2)
    assert summary.value[0].metadata.display_name == "T"
    events = list(tf.train.summary_iterator(only_event_file(tmp_path)))
    assert [e.summary.value[0].HasField("metadata") for e in events[1:]] == [True, False]


def test_graph_session_log_and_run_metadata_events(tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.reduce_sum(tf.square(x), name="y")
    writer = tf.summary.FileWriter(str(tmp_path), graph=tf.get_default_graph())
    run_metadata = tf.RunMetadata()
    with tf.Session() as session:
        session.run(y, {x: [1.0, 2.0]}, options=tf.RunOptions(trace_level=3),
                    run_metadata=run_metadata)
    writer.add_run_metadata(run_metadata, "step_3", global_step=3)
    with pytest.raises(ValueError, match="already used"):
        writer.add_run_metadata(run_metadata, "step_3")
    writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 3)
    writer.close()
    events = list(tf.train.summary_iterator(only_event_file(tmp_path)))
    kinds = [event.WhichOneof("what") for event in events]
    assert kinds == ["file_version", "graph_def", "tagged_run_metadata", "session_log"]
    graph_def = tf.GraphDef.FromString(events[1].graph_def)
    assert {"x", "y"} <= {node.name for node in graph_def.node}
    tagged = events[2].tagged_run_metadata
    assert tagged.tag == "step_3" and events[2].step == 3
    traced = summary_pb2.RunMetadata.FromString(tagged.run_metadata)
    traced_ops = {node.node_name for device in traced.step_stats.dev_stats
                  for node in device.node_stats}
    assert "y" in traced_ops
    assert events[3].session_log.status == tf.SessionLog.START


def _writer_threads():
    return [t for t in threading.enumerate() if t.name.startswith("EventFileWriter")]


def test_background_thread_flushes_and_close_joins_it(tmp_path):
    before = set(_writer_threads())
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=0.05, max_queue=2)
    started = set(_writer_threads()) - before
    assert len(started) == 1
    path = only_event_file(tmp_path)
    for step in range(20):  # more than max_queue: add_summary waits for the thread
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=step)]),
                           step)
    # No flush() call: the thread flushes by itself every flush_secs.
    done = threading.Event()
    while not done.wait(0.05):
        try:
            if len(list(tf.train.summary_iterator(path))) == 21:
                done.set()
        except tf.errors.DataLossError:
            pass  # we read while the thread was in the middle of a record: read again
    writer.close()
    assert not any(thread.is_alive() for thread in started)
    writer.add_summary(tf.Summary(), 99)  # ignored once closed, as in TF
    assert len(list(tf.train.summary_iterator(path))) == 21
    writer.reopen()  # a new file, a new thread
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=1)]), 100)
    writer.flush()
    files = sorted(glob.glob(os.path.join(str(tmp_path), "*tfevents*")), key=os.path.getmtime)
    assert len(files) == 2
    assert [e.step for e in tf.train.summary_iterator(writer.event_writer.path)] == [0, 100]
    writer.close()
    assert set(_writer_threads()) == before


def test_flush_makes_queued_events_readable(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=3600)
    try:
        for step in range(5):
            writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s",
                                                                  simple_value=step)]), step)
        writer.flush()
        events = list(tf.train.summary_iterator(only_event_file(tmp_path)))
        assert [event.summary.value[0].simple_value for event in events[1:]] == [0, 1, 2, 3, 4]
    finally:
        writer.close()


def test_two_writers_in_one_directory_never_share_a_file(tmp_path):
    first = tf.summary.FileWriter(str(tmp_path))
    second = tf.summary.FileWriter(str(tmp_path))
    first.close()
    second.close()
    assert first.event_writer.path != second.event_writer.path
    assert len(glob.glob(os.path.join(str(tmp_path), "*tfevents*"))) == 2


def test_file_writer_cache_shares_one_writer_per_directory(tmp_path):
    try:
        writer = tf.summary.FileWriterCache.get(str(tmp_path / "a"))
        assert tf.summary.FileWriterCache.get(str(tmp_path / "a")) is writer
        assert tf.summary.FileWriterCache.get(str(tmp_path / "b")) is not writer
        assert writer.get_logdir() == str(tmp_path / "a")
    finally:
        tf.summary.FileWriterCache.clear()
    kinds = [e.WhichOneof("what") for e in tf.train.summary_iterator(only_event_file(
        tmp_path / "a"))]
    assert kinds == ["file_version", "graph_def"]  # the default graph, as in TF


def test_a_process_that_never_closes_its_cached_writer_still_writes_everything(tmp_path):
    script = ("import sys, tensorweave as tf\n"
              "writer = tf.summary.FileWriterCache.get(sys.argv[1])\n"
              "for step in range(50):\n"
              "    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag='x', "
              "simple_value=step)]), step)\n")  # and exits: no flush, no close
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=50)
    events = list(tf.train.summary_iterator(only_event_file(tmp_path)))
    assert [event.step for event in events if event.HasField("summary")] == list(range(50))


def test_public_names_are_the_same_objects():  # the names themselves: tests/test_public_api.py
    assert tf.compat.v1.train.summary_iterator is tf.summary.summary_iterator
    assert tf.Summary is tf.summary.Summary and tf.Event is tf.summary.Event
    assert tf.GraphKeys.SUMMARIES == "summaries"
