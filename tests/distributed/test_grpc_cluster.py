"""A real cluster: one `tensorweave server` process per task on 127.0.0.1, the client here.

Remote feeds and fetches, a model split across tasks equal to the local result, traces from
every task, each data plane on its own, the wire encodings' error bounds, a malformed request,
and a 300 MB tensor crossing tasks."""
import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import graph_partition
from tensorweave.distributed import wire
from tensorweave.distributed.grpc import channels
from tensorweave.distributed.grpc.clients import GrpcWorker
from tensorweave.distributed.protos import worker_pb2
from tensorweave.framework.protos import graph_pb2
from tensorweave.runtime import executor
from tests.distributed.cluster_util import ServerProcesses
from tests.distributed.test_inprocess import check_shared_state_and_reset, run_model

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def servers():
    with ServerProcesses({"ps": 1, "worker": 2}) as processes:
        yield processes


def labels_of(metadata):
    return [n["label"] for d in metadata.step_stats.dev_stats for n in d["node_stats"]
            if n.get("label")]


def test_remote_feeds_fetches_and_traces_from_every_task(servers):
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
    with tf.device("/job:worker/task:1"):
        x = tf.placeholder(tf.float32, [3], name="x")
        scaled = v * x
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(scaled)
    with tf.Session(servers.target("worker", 0)) as sess:
        sess.run(v.initializer)
        metadata = tf.RunMetadata()
        out = sess.run({"total": total, "parts": [scaled, v]}, {x: [1.0, 10.0, 100.0]},
                       options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=metadata)
        assert out["total"] == 321.0
        np.testing.assert_array_equal(out["parts"][0], [1.0, 20.0, 300.0])
        np.testing.assert_array_equal(out["parts"][1], [1.0, 2.0, 3.0])
        devices = {d["device"].split("/device")[0] for d in metadata.step_stats.dev_stats}
        assert devices == {"/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0",
                           "/job:worker/replica:0/task:1"}
        assert any("RecvTensor" in n["op"] for d in metadata.step_stats.dev_stats
                   for n in d["node_stats"])
        names = sorted(d.name for d in sess.list_devices())
        assert len(names) == 3 and names[0].startswith("/job:ps/replica:0/task:0")
        # The graph grows after the first step: the master in the other process gets only
        # the new ops (ExtendSession) and runs them with the old ones.
        with tf.device("/job:ps/task:0"):
            grown = v * 10.0
        np.testing.assert_array_equal(sess.run(grown), [10.0, 20.0, 30.0])
        assert sess.run(total, {x: [1.0, 1.0, 1.0]}) == 6.0


def test_a_model_split_across_processes_equals_the_local_result(servers):
    local_losses, local_weights = run_model("")
    losses, weights = run_model(servers.target("worker", 1))
    np.testing.assert_allclose(losses, local_losses, rtol=1e-6)
    for value, local in zip(weights, local_weights):
        np.testing.assert_allclose(value, local, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("plane", ["shm", "tcp", "grpc"])
def test_each_data_plane_moves_a_large_tensor_exactly(servers, plane):
    tf.reset_default_graph()
    value = np.random.default_rng(1).standard_normal(3 << 20).astype(np.float32)  # 12 MB
    with tf.device("/job:ps/task:0"):
        source = tf.Variable(value, name="source")
    with tf.device("/job:worker/task:1"):
        copy = tf.identity(source)
        total = tf.reduce_sum(tf.cast(copy, tf.float64))
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(data_planes=[plane]))
    with tf.Session(servers.target("worker", 0), config=config) as sess:
        sess.run(source.initializer)
        sess.run(total)  # the first step learns the peers' status (shared memory is checked)
        metadata = tf.RunMetadata()
        out = sess.run(total, options=tf.RunOptions(trace_level=3), run_metadata=metadata)
        assert out == value.astype(np.float64).sum()
        assert any(f": {plane}, {value.nbytes} bytes" in label for label in labels_of(metadata))
        fetched = sess.run(copy)  # worker -> master -> client, large as well
        np.testing.assert_array_equal(fetched, value)


@pytest.mark.parametrize("encoding,ratio", [("float32", 1.0), ("float16", 0.5), ("int8", 0.25)])
def test_wire_encodings_between_processes_stay_within_their_bound(servers, encoding, ratio):
    tf.reset_default_graph()
    value = (np.random.default_rng(2).standard_normal(1 << 18) * 10).astype(np.float32)
    with tf.device("/job:ps/task:0"):
        source = tf.identity(tf.constant(value))  # a Const alone would be copied, not sent
    with tf.device("/job:worker/task:1"):
        received = tf.identity(source)
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(tensor_wire_encoding=encoding))
    with tf.Session(servers.target("worker", 0), config=config) as sess:
        metadata = tf.RunMetadata()
        out = sess.run(received, options=tf.RunOptions(trace_level=3), run_metadata=metadata)
    error = np.max(np.abs(out - value))
    largest = np.max(np.abs(value))
    bound = {"float32": 0.0, "float16": largest * 2 ** -11 + 2 ** -25,
             "int8": largest / 254 + largest * 2 ** -21}[encoding]
    assert error <= bound
    assert (error > 0) == (encoding != "float32")
    assert any(f"{int(value.nbytes * ratio)} bytes, {encoding}" in label
               for label in labels_of(metadata))


def test_malformed_requests_get_invalid_argument_and_the_server_keeps_serving(servers):
    address = servers.address("ps", 0)
    channel = channels.channel_for(address)
    for method in ("RunGraph", "RegisterGraph", "RecvTensor", "CleanupAll"):
        raw = channel.unary_unary(f"/tensorweave.WorkerService/{method}",
                                  request_serializer=channels.identity,
                                  response_deserializer=channels.identity)
        with pytest.raises(grpc.RpcError) as caught:
            raw(b"\xff\xfe\x00garbage\x13\x37", timeout=10)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, method
    worker = GrpcWorker(address, "/job:ps/replica:0/task:0", None)
    bad_op = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(
        name="n", op="NoSuchOp", device="/job:ps/replica:0/task:0/device:CPU:0")])
    with pytest.raises(tf.errors.InvalidArgumentError, match="NoSuchOp"):
        worker.register_graph(worker_pb2.RegisterGraphRequest(graph_def=bad_op), 10)
    dangling = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(
        name="n", op="Identity", input=["missing"],
        device="/job:ps/replica:0/task:0/device:CPU:0")])
    with pytest.raises(tf.errors.InvalidArgumentError, match="missing"):
        worker.register_graph(worker_pb2.RegisterGraphRequest(graph_def=dangling), 10)
    # A registered graph fed a tensor whose bytes do not match its shape.
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None], name="x")
    doubled = x * 2.0
    device = "/job:ps/replica:0/task:0/device:CPU:0"
    ops = executor.prune([doubled], [], [x])
    part = graph_partition.split_by_task(ops, dict.fromkeys(ops, device), [x], [doubled])
    handle = worker.register_graph(worker_pb2.RegisterGraphRequest(
        graph_def=part["/job:ps/replica:0/task:0"].graph_def), 10).graph_handle
    request = worker_pb2.RunGraphRequest(graph_handle=handle, step_id=7, recv_key=[doubled.name])
    request.send.add(name=x.name, tensor=wire.to_inline(np.zeros(4, np.float32)))
    request.send[0].tensor.shape[:] = [5]
    with pytest.raises(tf.errors.InvalidArgumentError, match="needs 20 payload bytes, got 16"):
        worker.run_graph_async(request, {}, 10).result()
    request.send[0].tensor.shape[:] = [4]
    _, fetched = worker.run_graph_async(request, {}, 10).result()
    np.testing.assert_array_equal(fetched[doubled.name], np.zeros(4, np.float32))
    # Still serving sessions.
    with tf.Session(servers.target("ps", 0)) as sess:
        assert list(sess.run(doubled, {x: [3.0]})) == [6.0]


def test_a_300_megabyte_tensor_crosses_tasks_over_grpc_streaming(servers):
    tf.reset_default_graph()
    count = 300 * (1 << 20) // 4
    with tf.device("/job:ps/task:0"):
        big = tf.fill([count], 0.5)
    with tf.device("/job:worker/task:1"):
        total = tf.reduce_sum(tf.cast(big, tf.float64))
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(data_planes=["grpc"]))
    with tf.Session(servers.target("worker", 0), config=config) as sess:
        metadata = tf.RunMetadata()
        out = sess.run(total, options=tf.RunOptions(trace_level=3), run_metadata=metadata)
    assert out == count * 0.5
    assert any(f"grpc, {count * 4} bytes" in label for label in labels_of(metadata))


@pytest.mark.parametrize("plane", ["shm", "grpc"])
def test_a_large_feed_from_a_client_in_another_process(servers, plane):
    tf.reset_default_graph()
    value = np.random.default_rng(3).standard_normal(2 << 20).astype(np.float32)  # 8 MB
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.device("/job:ps/task:0"):
        total = tf.reduce_sum(tf.cast(x, tf.float64))
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(data_planes=[plane]))
    with tf.Session(servers.target("worker", 1), config=config) as sess:
        for _ in range(2):  # the first step learns whether shared memory is reachable
            assert sess.run(total, {x: value}) == value.astype(np.float64).sum()
        np.testing.assert_array_equal(sess.run(x, {x: value}), value)


def test_a_received_array_in_shared_memory_is_never_overwritten_while_it_is_used(servers):
    """Arrays received through shared memory view the segment in place; the holder may reuse a
    segment only once every such array is gone."""
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        source = tf.Variable(tf.zeros([1 << 20]), name="kept")  # 4 MB
        bump = source.assign_add(tf.ones([1 << 20]))
    with tf.device("/job:worker/task:1"):
        copy = tf.identity(source)
    config = tf.ConfigProto(rpc_options=tf.RPCOptions(data_planes=["shm"]))
    with tf.Session(servers.target("worker", 1), config=config) as sess:
        sess.run(source.initializer)
        sess.run(copy)  # learn the peers' status
        kept = [sess.run(copy)]
        for _ in range(6):  # more than the holder keeps per reader
            sess.run(bump)
            kept.append(sess.run(copy))
        for expected, value in enumerate(kept):
            assert value.min() == value.max() == expected


def test_a_remote_deadline_is_deadline_exceeded_and_the_next_step_runs(servers):
    """RunOptions.timeout_in_ms on a step blocked across tasks (a worker waits for a dequeue
    on the ps): DeadlineExceededError, never a CancelledError from the tasks the abort
    reached, and no Recv left blocked (the next step with data runs)."""
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="deadline_queue")
        taken = queue.dequeue()
        enqueue = queue.enqueue(3.0)
    with tf.device("/job:worker/task:1"):
        doubled = taken * 2.0
    with tf.Session(servers.target("worker", 0)) as sess:
        for timeout_ms in (100, 200, 300, 100, 200):
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(doubled, options=tf.RunOptions(timeout_in_ms=timeout_ms))
        sess.run(enqueue)
        assert sess.run(doubled, options=tf.RunOptions(timeout_in_ms=20_000)) == 6.0


def test_variables_and_queues_are_shared_by_clients_and_reset_clears_them(servers):
    """Last in this module: the reset clears every container of the cluster."""
    check_shared_state_and_reset(servers.target("worker", 0), servers.target("worker", 1))
