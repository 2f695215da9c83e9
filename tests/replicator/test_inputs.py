"""What input_fn may return, and how replicas share or shard it (MultiDeviceReplicator, 2
replicas): which examples each replica sees, step by step."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave import replicator

pytestmark = pytest.mark.timeout(60)


def _seen(input_fn, steps=4, **kwargs):
    """[[replica 0's value, replica 1's value] per step]."""
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(2, **kwargs)
    values = repl.run(lambda inputs: tf.identity(inputs), input_fn)
    with tf.Session(config=repl.session_config()) as sess:
        repl.init(sess)
        return np.array([sess.run(values) for _ in range(steps)]).reshape(steps, 2).tolist()


def test_datasets_are_sharded_by_replica_unless_told_not_to():
    dataset_fn = lambda replica_id: tf.data.Dataset.range(8)  # noqa: E731
    assert _seen(dataset_fn) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert _seen(dataset_fn, shard_inputs=False) == [[0, 0], [1, 1], [2, 2], [3, 3]]


def test_per_worker_input_gives_each_replica_the_next_element():
    calls = []

    def input_fn(worker):
        calls.append(worker)
        return tf.data.Dataset.range(8)

    seen = _seen(input_fn, input_mode="per_worker")
    assert calls == [0]
    assert [sorted(step) for step in seen] == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_iterators_callables_and_tensors():
    def iterator_fn(replica_id):
        return tf.data.make_initializable_iterator(
            tf.data.Dataset.range(10 * replica_id, 10 * replica_id + 4))

    assert _seen(iterator_fn) == [[0, 10], [1, 11], [2, 12], [3, 13]]
    assert _seen(lambda r: (lambda: tf.constant(r * 7)), steps=1) == [[0, 7]]
    assert _seen(lambda r: tf.constant(r + 3), steps=1) == [[3, 4]]


def test_bad_input_fn_and_mode():
    tf.reset_default_graph()
    with pytest.raises(TypeError, match="input_fn must be callable"):
        replicator.MultiDeviceReplicator(2).run(lambda x: x, input_fn=5)
    with pytest.raises(ValueError, match="input_mode must be one of"):
        replicator.MultiDeviceReplicator(2, input_mode="per_device")
    with pytest.raises(TypeError, match="step_fn must be callable"):
        replicator.MultiDeviceReplicator(2).run(None)
