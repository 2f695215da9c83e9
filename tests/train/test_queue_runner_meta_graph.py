"""QueueRunners travel in a MetaGraphDef (`queue_runners` collection, as QueueRunnerDefs): a
graph saved with its input pipeline and imported again into an empty graph gets runners whose
threads fill the queue, so `start_queue_runners` after `import_meta_graph` works as in TF."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.protos.queue_runner_pb2 import QueueRunnerDef


def _pipeline():
    data = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    row = tf.train.slice_input_producer([data], shuffle=False)[0]
    batch = tf.train.batch([row], batch_size=3, num_threads=1)
    tf.add_to_collection("batch", batch)
    return batch


def test_queue_runner_def_names_its_queue_and_ops():
    _pipeline()
    runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    proto = runners[-1].to_proto()
    assert isinstance(proto, QueueRunnerDef)
    assert proto.queue_name == runners[-1].name
    assert list(proto.enqueue_op_name) == [op.name for op in runners[-1].enqueue_ops]
    assert proto.close_op_name == runners[-1].close_op.name
    assert list(proto.queue_closed_exception_types) == [tf.errors.OUT_OF_RANGE,
                                                        tf.errors.CANCELLED]
    assert runners[-1].to_proto(export_scope="elsewhere") is None


def test_imported_runners_fill_the_queue(tmp_path, caplog):
    with tf.Graph().as_default():
        _pipeline()
        path = str(tmp_path / "pipeline.meta")
        meta = tf.train.export_meta_graph(path)
    assert "queue_runners" in meta.collection_def
    assert not [r for r in caplog.records if "queue_runners" in r.getMessage()]
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path, import_scope="copy")
        runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert len(runners) == 2 and all(r.name.startswith("copy/") for r in runners)
        batch = tf.get_collection("batch")[0]
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            got = sess.run(batch)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
    np.testing.assert_array_equal(got, np.arange(6, dtype=np.float32).reshape(3, 2))


def test_def_and_queue_together_are_refused():
    _pipeline()
    runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1]
    with pytest.raises(ValueError, match="either queue_runner_def"):
        tf.train.QueueRunner(runner.queue, runner.enqueue_ops,
                             queue_runner_def=runner.to_proto())
