"""Sharded checkpoints in a real cluster: every parameter server writes its own variables (the
SaveV2 of each shard runs on that ps task, in its process), the chief's client merges the index;
the checkpoint then restores into a cluster with a different number of parameter servers."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.cluster_util import ServerProcesses

pytestmark = pytest.mark.timeout(120)


def _model(cluster):
    with tf.device(tf.train.replica_device_setter(cluster=cluster,
                                                  worker_device="/job:worker/task:0")):
        emb = tf.get_variable("emb", [12, 3], partitioner=tf.fixed_size_partitioner(2),
                              initializer=tf.random_normal_initializer(seed=3))
        bias = tf.Variable(tf.range(4.0), name="bias")
        step = tf.train.get_or_create_global_step()
    return emb, bias, step


def test_each_ps_writes_its_shard_and_the_checkpoint_restores_into_one_ps(tmp_path):
    with ServerProcesses({"ps": 2, "worker": 1}, skip={("worker", 0)}) as processes:
        worker = tf.train.Server(processes.cluster, "worker", 0)
        try:
            emb, bias, step = _model(processes.cluster)
            saver = tf.train.Saver(sharded=True)
            with tf.Session(worker.target) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(tf.assign(step, 7))
                expected = sess.run([emb, bias])
                # Saver.save's own run, traced: where did each shard's SaveV2 run?
                path = str(tmp_path / "model.ckpt-7")
                metadata = tf.RunMetadata()
                sess.run(saver.saver_def.save_tensor_name,
                         {saver.saver_def.filename_tensor_name: path},
                         options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=metadata)
                devices = sorted(d["device"] for d in metadata.step_stats.dev_stats
                                 for n in d["node_stats"] if n.get("type") == "SaveV2")
        finally:
            worker.stop()
    assert devices == ["/job:ps/replica:0/task:0/device:CPU:0",
                       "/job:ps/replica:0/task:1/device:CPU:0"]
    assert sorted(n for n in os.listdir(tmp_path) if ".data-" in n) == [
        "model.ckpt-7.data-00000-of-00002.safetensors",
        "model.ckpt-7.data-00001-of-00002.safetensors"]
    assert dict(tf.train.list_variables(path)) == {"bias": [4], "emb": [12, 3],
                                                   "global_step": []}
    tf.reset_default_graph()
    with ServerProcesses({"ps": 1, "worker": 1}, skip={("worker", 0)}) as processes:
        worker = tf.train.Server(processes.cluster, "worker", 0)
        try:
            emb, bias, step = _model(processes.cluster)
            with tf.Session(worker.target) as sess:
                tf.train.Saver().restore(sess, str(tmp_path / "model.ckpt-7"))
                restored = sess.run([emb, bias])
                assert sess.run(step) == 7
        finally:
            worker.stop()
    for got, want in zip(restored, expected):
        np.testing.assert_array_equal(got, want)
