"""Checks that TensorBoard's own event loader reads the event files tensorweave writes.

Not a test (the tests never need tensorboard): run it by hand in an environment that has both
tensorweave and tensorboard, e.g.

    python -m venv --system-site-packages /tmp/tb-venv
    /tmp/tb-venv/bin/pip install tensorboard
    /tmp/tb-venv/bin/python tools/check_tensorboard.py [LOGDIR]

It writes one run with tensorweave (scalars over 5 steps, a histogram, images, audio, text,
the graph, a traced step), loads the directory with TensorBoard's EventAccumulator, compares what
TensorBoard sees with what was written, prints a line per kind and exits non-zero on any
mismatch.
"""
import sys
import tempfile

import numpy as np

import tensorweave as tf

from tensorboard.backend.event_processing import event_accumulator


def write_run(logdir):
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.name_scope("train"):
        tf.summary.scalar("loss", tf.reduce_mean(tf.square(x)))
    tf.summary.histogram("values", x)
    tf.summary.image("digits", tf.reshape(tf.cast(tf.abs(x[:2 * 28 * 28]) * 80, tf.uint8),
                                          [2, 28, 28, 1]), max_outputs=2)
    tf.summary.text("note", tf.constant("written by tensorweave"))
    tf.summary.audio("tone", tf.reshape(tf.tanh(x[:2 * 700]), [2, 700]), 8000, max_outputs=1)
    merged = tf.summary.merge_all()
    rng = np.random.default_rng(0)
    batches = [rng.normal(0, 1 + step, 2 * 28 * 28).astype(np.float32) for step in range(5)]
    with tf.Session() as session, tf.summary.FileWriter(logdir, session.graph) as writer:
        for step, batch in enumerate(batches):
            writer.add_summary(session.run(merged, {x: batch}), step)
        metadata = tf.RunMetadata()
        session.run(merged, {x: batches[0]}, options=tf.RunOptions(trace_level=3),
                    run_metadata=metadata)
        writer.add_run_metadata(metadata, "step_0", 0)
    return batches


def main(argv):
    logdir = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="tw-tensorboard-")
    batches = write_run(logdir)
    accumulator = event_accumulator.EventAccumulator(logdir, size_guidance={
        event_accumulator.IMAGES: 0, event_accumulator.AUDIO: 0, event_accumulator.HISTOGRAMS: 0,
        event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0})
    accumulator.Reload()
    tags = accumulator.Tags()
    problems = []

    def check(name, ok, detail):
        print(f"{'ok ' if ok else 'BAD'} {name}: {detail}")
        if not ok:
            problems.append(name)

    losses = [(event.step, event.value) for event in accumulator.Scalars("train/loss")]
    expected = [(step, float(np.mean(np.square(batch)))) for step, batch in enumerate(batches)]
    check("scalars", [s for s, _ in losses] == [s for s, _ in expected] and np.allclose(
        [v for _, v in losses], [v for _, v in expected], rtol=1e-5), f"train/loss {losses}")
    histograms = accumulator.Histograms("values")
    first = histograms[0].histogram_value
    check("histograms", len(histograms) == 5 and first.num == batches[0].size and
          np.isclose(first.sum, batches[0].astype(np.float64).sum(), rtol=1e-4),
          f"{len(histograms)} steps, num {first.num}, min {first.min:.3f}, max {first.max:.3f},"
          f" {len(first.bucket)} buckets")
    images = accumulator.Images("digits/image/0")
    check("images", len(images) == 5 and (images[0].width, images[0].height) == (28, 28) and
          images[0].encoded_image_string.startswith(b"\x89PNG"),
          f"{len(images)} steps of {images[0].width}x{images[0].height} PNG")
    clips = accumulator.Audio("tone/audio")
    check("audio", len(clips) == 5 and clips[0].encoded_audio_string.startswith(b"RIFF") and
          clips[0].length_frames == 700 and clips[0].sample_rate == 8000,
          f"{len(clips)} steps of {clips[0].length_frames} frames at {clips[0].sample_rate} Hz"
          f" ({clips[0].content_type})")
    texts = accumulator.Tensors("note")
    check("text", len(texts) == 5 and
          texts[0].tensor_proto.string_val[0] == b"written by tensorweave",
          f"{texts[0].tensor_proto.string_val[0]!r}, plugin "
          f"{accumulator.SummaryMetadata('note').plugin_data.plugin_name!r}")
    graph = accumulator.Graph()
    check("graph", any(node.name == "x" for node in graph.node),
          f"{len(graph.node)} nodes")
    check("run metadata", tags.get("run_metadata") == ["step_0"] and
          len(accumulator.RunMetadata("step_0").step_stats.dev_stats) > 0,
          f"tags {tags.get('run_metadata')}")
    print(f"logdir {logdir}: {'all read by TensorBoard' if not problems else problems}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
