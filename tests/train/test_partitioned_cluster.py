"""Partitioned variables in a real cluster (two `tensorweave server` ps processes, the worker
in this process): the pieces of a large variable spread over both ps tasks; matmul reads the
whole variable, embedding_lookup gathers each piece's rows on that piece's ps, the optimizer
updates each piece on its own ps (sparse updates for the embedding), training gives the same
values as one unpartitioned variable, a sharded checkpoint of it restores into another
partitioning, and sync replicas average each piece's sparse gradients on its own ps."""
import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.cluster_util import ServerProcesses
from tests.train.test_sync_replicas import _run_workers

pytestmark = pytest.mark.timeout(120)
RNG = np.random.default_rng(7)
EMB = RNG.normal(size=(12, 3)).astype(np.float32)
W = RNG.normal(size=(8, 4)).astype(np.float32)
X = RNG.normal(size=(5, 8)).astype(np.float32)
IDS = np.array([11, 0, 4, 7, 4], np.int64)
STEPS = 3


def _model(partitioner, device_fn=None):
    with tf.device(device_fn):
        emb = tf.get_variable("emb", initializer=EMB, partitioner=partitioner)
        w = tf.get_variable("w", initializer=W, partitioner=partitioner)
        step = tf.train.get_or_create_global_step()
    rows = tf.nn.embedding_lookup(emb, IDS, partition_strategy="div")
    loss = tf.reduce_sum(tf.square(tf.matmul(X, w))) + tf.reduce_sum(rows * rows[::-1])
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
    return emb, w, train


def _expected():
    """The same training with unpartitioned variables, in one process."""
    with tf.Graph().as_default():
        emb, w, train = _model(None)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(STEPS):
                sess.run(train)
            return sess.run([emb, w])


def _devices_of(metadata, op_type):
    return {n["op"]: d["device"] for d in metadata.step_stats.dev_stats
            for n in d["node_stats"] if n.get("type") == op_type}


def test_pieces_on_two_ps_tasks_are_read_gathered_and_updated_where_they_live(tmp_path):
    expected = _expected()
    with ServerProcesses({"ps": 2, "worker": 1}, skip={("worker", 0)}) as processes:
        worker = tf.train.Server(processes.cluster, "worker", 0)
        try:
            setter = tf.train.replica_device_setter(cluster=processes.cluster,
                                                    worker_device="/job:worker/task:0")
            emb, w, train = _model(tf.fixed_size_partitioner(2), setter)
            # round robin over the ps tasks: each variable has a piece on each
            assert [v.device for v in emb] == ["/job:ps/task:0", "/job:ps/task:1"]
            assert [v.device for v in w] == ["/job:ps/task:0", "/job:ps/task:1"]
            with tf.Session(worker.target) as sess:
                sess.run(tf.global_variables_initializer())
                metadata = tf.RunMetadata()
                for step in range(STEPS):
                    trace = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
                    sess.run(train, options=trace if step == STEPS - 1 else None,
                             run_metadata=metadata if step == STEPS - 1 else None)
                got = sess.run([emb, w])
                saver = tf.train.Saver(sharded=True)
                path = saver.save(sess, str(tmp_path / "model.ckpt"))
                # The same checkpoint into three pieces (two on ps 0, one on ps 1).
                with tf.variable_scope("again"):
                    emb3 = tf.get_variable("emb", [12, 3],
                                           partitioner=tf.fixed_size_partitioner(3))
                tf.train.Saver({"emb": emb3}).restore(sess, path)
                restored = sess.run(emb3)
        finally:
            worker.stop()
    for value, want in zip(got, expected):
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(restored, expected[0], rtol=1e-5, atol=1e-6)
    ps_tasks = ["/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"]
    graph = tf.get_default_graph()
    gathers = _devices_of(metadata, "GatherV2")
    for piece, device in zip(emb, ps_tasks):  # each piece's rows are gathered on its ps
        ops = [op.name for op in graph.get_operations() if op.type == "GatherV2"
               and op.inputs[0].op.name.startswith(piece.op.name + "/")]
        assert ops and all(gathers[name] == device for name in ops), (ops, gathers)
    # sparse updates of the embedding's pieces, dense ones of w's, each on its piece's ps
    assert sorted(_devices_of(metadata, "ScatterAdd").values()) == ps_tasks
    assert sorted(_devices_of(metadata, "ApplyGradientDescent").values()) == ps_tasks


def test_sync_replicas_average_each_pieces_sparse_gradients_on_its_own_ps():
    """Two workers (servers in this process, one thread each), 2-of-2 sync, a table in two
    pieces on two ps processes. Worker i's loss is c_i times the sum of rows ids[i]
    ("div": rows 0-2 in piece 0, 3-5 in piece 1), so each row's step is the mean of c_i over
    the workers that looked it up: row 0 -> 1, row 4 -> (1 + 3) / 2, row 5 -> 3."""
    ids = [[0, 4], [4, 5]]
    with ServerProcesses({"ps": 2, "worker": 2},
                         skip={("worker", 0), ("worker", 1)}) as processes:
        servers = [tf.train.Server(processes.cluster, "worker", i) for i in range(2)]

        def worker(index):
            setter = tf.train.replica_device_setter(cluster=processes.cluster,
                                                    worker_device=f"/job:worker/task:{index}")
            with tf.Graph().as_default(), tf.device(setter):
                table = tf.get_variable("table", [6, 2], initializer=tf.zeros_initializer(),
                                        partitioner=tf.fixed_size_partitioner(2))
                step = tf.train.get_or_create_global_step()
                rows = tf.nn.embedding_lookup(table, ids[index], partition_strategy="div")
                loss = (1.0 + 2.0 * index) * tf.reduce_sum(rows)
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5),
                                                     2, 2)
                train = opt.minimize(loss, global_step=step)
                devices = sorted(op.device for op in tf.get_default_graph().get_operations()
                                 if op.type == "SparseConditionalAccumulator")
                hooks = [opt.make_session_run_hook(index == 0),
                         tf.train.StopAtStepHook(last_step=5)]
                with tf.train.MonitoredTrainingSession(master=servers[index].target,
                                                       is_chief=index == 0, hooks=hooks,
                                                       log_step_count_steps=0) as sess:
                    while not sess.should_stop():
                        sess.run(train)
                with tf.Session(servers[index].target) as sess:
                    return devices, sess.run(table)

        try:
            results = _run_workers(worker, 2)
        finally:
            for server in servers:
                server.stop()
    expected = -0.5 * 5 * np.repeat(np.array([[1.0], [0], [0], [0], [2], [3]]), 2, axis=1)
    for devices, table in results.values():
        assert devices == ["/job:ps/task:0", "/job:ps/task:1"]  # one per piece, on its ps
        np.testing.assert_allclose(table, expected)
