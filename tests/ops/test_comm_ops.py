"""_Send and _Recv as ops: the kernels talk through the step's rendezvous, so a graph that
wires them by hand (as a worker's imported partition does) runs like a partitioned one."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.op_util import make_op
from tensorweave.runtime.cancellation import CancellationToken
from tensorweave.runtime.rendezvous import LocalRendezvous
from tensorweave.runtime.scheduler import StepContext
from tensorweave.kernels import registry

COVERED_OP_TYPES = {"_Send", "_Recv"}
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def endpoints(name, src=CPU0, dst=CPU1):
    return {"tensor_name": name, "send_device": src, "recv_device": dst,
            "send_device_incarnation": 0, "client_terminated": False}


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, object])
def test_hand_wired_send_and_recv_ops_move_a_tensor_between_devices(dtype):
    value = np.array([[1, 0], [3, 4]]).astype(dtype)
    if dtype is object:
        value = np.array([b"a", b"bc"], dtype=object)
    with tf.device("/cpu:0"):
        source = tf.constant(value)
        send = make_op("_Send", [source], endpoints("edge"), name="send")
    with tf.device("/cpu:1"):
        received = make_op("_Recv", [], dict(endpoints("edge"), tensor_type=source.dtype),
                           name="recv").outputs[0]
        copy = tf.identity(received)
    assert received.dtype == source.dtype and send.outputs == []
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        for _ in range(2):  # one rendezvous per step: the key is used again next step
            out, _ = sess.run([copy, send])
            assert out.dtype == value.dtype
            np.testing.assert_array_equal(out, value)


def test_a_recv_nobody_sends_to_waits_until_the_deadline():
    with tf.device("/cpu:1"):
        orphan = make_op("_Recv", [], dict(endpoints("never"), tensor_type=tf.float32),
                         name="orphan").outputs[0]
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(orphan, options=tf.RunOptions(timeout_in_ms=100))


def test_kernels_use_the_step_context_key_and_complete_asynchronously():
    token = CancellationToken()
    rendezvous = LocalRendezvous(3)
    send_ctx = StepContext(3, CPU0, rendezvous, token)
    recv_ctx = StepContext(3, CPU1, rendezvous, token)
    recv = registry.get_kernel("_Recv")
    assert recv.execution == "async" and recv.step_context and "done" not in recv.attr_names
    results = []
    recv.compute(recv_ctx, done=lambda value, error=None: results.append((value, error)),
                 tensor_type=tf.float32, **endpoints("x:0"))
    assert results == [] and rendezvous.pending_keys() == [f"{CPU0};{CPU1};x:0;3"]
    send = registry.get_kernel("_Send")
    thread = threading.Thread(target=send.compute, args=(send_ctx, np.float32(2.5)),
                              kwargs=dict(T=tf.float32, **endpoints("x:0")))
    thread.start()
    thread.join(5)
    assert results == [(np.float32(2.5), None)]
    # An aborted step completes a waiting Recv with the step's error.
    recv.compute(recv_ctx, done=lambda value, error=None: results.append((value, error)),
                 tensor_type=tf.float32, **endpoints("y:0"))
    token.add_callback(rendezvous.abort)
    token.cancel(tf.errors.AbortedError(None, None, "worker lost"))
    assert isinstance(results[-1][1], tf.errors.AbortedError)
