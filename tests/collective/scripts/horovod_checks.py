"""One rank of a 2+ rank Horovod-API job (TF 1.x graph mode): every hvd call against its
closed-form answer. Prints "RESULT <json>"."""
import json

import numpy as np

import tensorweave as tf
import tensorweave.horovod as hvd


def close(a, b, tol=0.0):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), atol=tol,
                               rtol=tol)


def main():
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    ranks = np.arange(size)
    checks = []
    x = tf.constant([1.0, 2.0, 3.0]) * float(rank + 1)
    mean = hvd.allreduce(x)
    total = hvd.allreduce(x, op=hvd.Sum)
    old_style = hvd.allreduce(x, average=False)
    largest = hvd.allreduce(x, op=hvd.Max)
    half = hvd.allreduce(x, compression=hvd.Compression.fp16)
    brain = hvd.allreduce(x, compression=hvd.Compression.bf16)
    scaled = hvd.allreduce(x, op=hvd.Sum, prescale_factor=2.0, postscale_factor=0.5)
    gathered = hvd.allgather(tf.fill([rank + 1, 2], float(rank)))
    root = hvd.broadcast(tf.constant([rank, rank], tf.int64), root_rank=size - 1)
    exchanged = hvd.alltoall(tf.reshape(tf.range(2 * size) + 100 * rank, [2 * size, 1]))
    with tf.Session() as sess:
        got = sess.run([mean, total, old_style, largest, half, scaled, gathered, root,
                        exchanged, brain])
    sum_factor = float(np.sum(ranks + 1))
    close(got[0], np.array([1.0, 2.0, 3.0]) * sum_factor / size, 1e-6)
    close(got[1], np.array([1.0, 2.0, 3.0]) * sum_factor)
    close(got[2], got[1])
    close(got[3], np.array([1.0, 2.0, 3.0]) * size)
    assert got[4].dtype == np.float32 and half.dtype == tf.float32
    close(got[4], got[0], 1e-2)
    assert got[9].dtype == np.float32 and brain.op.get_attr("compression") == "bf16"
    close(got[9], got[0], 0.1)
    close(got[5], got[1], 1e-6)
    assert got[6].shape == (size * (size + 1) // 2, 2)
    close(got[6][:, 0], np.concatenate([np.full(r + 1, r) for r in ranks]))
    close(got[7], [size - 1, size - 1])
    close(got[8].ravel(), np.concatenate([[2 * rank, 2 * rank + 1] + 100 * s for s in ranks]))
    checks.append("ops")

    # DistributedOptimizer: each rank's gradient is its own data; the step uses the average.
    with tf.Graph().as_default():
        w = tf.Variable([0.0, 0.0], name="w")
        data = tf.constant([1.0, -2.0]) * float(rank + 1)
        loss = tf.reduce_sum(w * data)
        optimizer = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0))
        train = optimizer.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            close(sess.run(w), -np.array([1.0, -2.0]) * sum_factor / size, 1e-6)
    checks.append("dense")

    # backward_passes_per_step: two passes summed locally (averaged over the passes on
    # request), reduced and applied once; the global step counts every pass.
    for average in (False, True):
        with tf.Graph().as_default():
            w = tf.Variable([0.0, 0.0], name="w")
            scale = tf.placeholder(tf.float32, [])
            loss = tf.reduce_sum(w * tf.constant([1.0, -2.0]) * scale * float(rank + 1))
            step = tf.train.get_or_create_global_step()
            optimizer = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                                 backward_passes_per_step=2,
                                                 average_aggregated_gradients=average)
            train = optimizer.minimize(loss, global_step=step)
            want = -np.array([1.0, -2.0]) * sum_factor / size / (2.0 if average else 1.0)
            with tf.Session() as sess:
                sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
                sess.run(train, {scale: 1.0})
                close(sess.run(w), [0.0, 0.0])
                assert sess.run(step) == 1
                sess.run(train, {scale: 2.0})
                close(sess.run(w), want * 3, 1e-6)
                for value in (3.0, 4.0):
                    sess.run(train, {scale: value})
                close(sess.run(w), want * 10, 1e-5)
                assert sess.run(step) == 4
    # A collective inside a tf.cond branch meets its peers (every rank takes the branch).
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, [])
        mine = tf.constant([1.0, 2.0, 3.0]) * float(rank + 1)
        out = tf.cond(flag, lambda: hvd.allreduce(mine, op=hvd.Sum), lambda: mine * 1.0)
        with tf.Session() as sess:
            close(sess.run(out, {flag: True}), np.array([1.0, 2.0, 3.0]) * sum_factor)
            close(sess.run(out, {flag: False}), np.array([1.0, 2.0, 3.0]) * (rank + 1))
    checks.append("aggregation")

    # Sparse gradients are allgathered (IndexedSlices), or averaged densely on request.
    for sparse_as_dense in (False, True):
        with tf.Graph().as_default():
            table = tf.Variable(np.zeros((size + 1, 2), np.float32), name="table")
            rows = tf.nn.embedding_lookup(table, [rank, size])  # row `size` is shared
            loss = tf.reduce_sum(rows)
            optimizer = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                                 sparse_as_dense=sparse_as_dense)
            grads = optimizer.compute_gradients(loss)
            is_sparse = isinstance(grads[0][0], tf.IndexedSlices)
            assert is_sparse != sparse_as_dense, (sparse_as_dense, grads)
            train = optimizer.apply_gradients(grads)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train)
                want = np.zeros((size + 1, 2))
                want[:size] = -1.0 / size
                want[size] = -1.0
                close(sess.run(table), want, 1e-6)
    checks.append("sparse")

    # The hook gives every rank the root's initial values.
    with tf.Graph().as_default():
        v = tf.Variable(np.full(3, float(rank)), name="v")
        step = tf.train.get_or_create_global_step()
        increment = tf.assign_add(step, 1)
        hooks = [hvd.BroadcastGlobalVariablesHook(0), tf.train.StopAtStepHook(last_step=2)]
        with tf.train.MonitoredTrainingSession(hooks=hooks, checkpoint_dir=None) as sess:
            close(sess.run(v), [0.0, 0.0, 0.0])
            while not sess.should_stop():
                sess.run(increment)
    checks.append("hook")
    # Uneven batches: rank r has 1 + r; hvd.join() keeps the others from deadlocking.
    with tf.Graph().as_default():
        total = hvd.allreduce(tf.ones([3]), op=hvd.Sum)
        join = hvd.join()
        with tf.Session() as sess:
            for step in range(1 + rank):
                active = sum(1 for r in ranks if step < 1 + r)
                close(sess.run(total), [active] * 3)
            assert sess.run(join) == size - 1
    checks.append("join")
    print("RESULT " + json.dumps({"rank": rank, "size": size, "checks": checks,
                                  "mpi": hvd.mpi_enabled(), "local": hvd.local_rank()}),
          flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
