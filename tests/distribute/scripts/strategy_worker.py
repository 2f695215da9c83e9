"""One worker of a between-graph strategy job, the cluster from TF_CONFIG:
  mwms STEPS BATCH   MultiWorkerMirroredStrategy trains strategy_model for STEPS steps of
                     BATCH examples per worker (every worker starts from different initial
                     values: the initializer's broadcast must give them worker 0's)
  keras STEPS BATCH  a tf.keras model compiled under MultiWorkerMirroredStrategy, fit on
                     the worker's batches (the same check as mwms)
  estimator STEPS BATCH MODEL_DIR   tf.estimator with that strategy (a chief and a worker)
  ps STEPS BATCH     ParameterServerStrategy: loss = mean(x.w), whose gradient does not depend
                     on w, trained asynchronously; each worker waits until the global step
                     counts every worker's steps, then reads w from the ps
Prints one RESULT line (JSON)."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))

import tensorweave as tf  # noqa: E402
from tests.distribute import strategy_model  # noqa: E402


def multi_worker_mirrored(steps, batch):
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    rank = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    train_op, loss, iterator, w, b = strategy_model.build(strategy, batch, initial_offset=rank)

    def reductions():
        context = tf.distribute.get_replica_context()
        value = tf.fill([2], float(rank + 1))
        merged = context.merge_call(
            lambda strategy_, x: strategy_.extended.reduce_to("SUM", x, "/cpu:0"),
            args=(value * 10,))
        return (context.all_reduce(tf.distribute.ReduceOp.SUM, value),
                context.all_reduce("MEAN", value), merged)

    with strategy.scope():
        summed, mean, merged = strategy.run(reductions)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(iterator.initialize())
        for _ in range(steps):
            sess.run(train_op)
        w_value, b_value, loss_value = sess.run([w, b, loss])
        reduced = sess.run([strategy.experimental_local_results(t)[0]
                            for t in (summed, mean, merged)])
    return {"rank": rank, "replicas": strategy.num_replicas_in_sync, "w": w_value.tolist(),
            "b": b_value.tolist(), "loss": float(loss_value),
            "reduced": [r.tolist() for r in reduced],
            "between_graph": strategy.extended.experimental_between_graph}


def keras_multi_worker(steps, batch):
    """tf.keras fit under MultiWorkerMirroredStrategy: worker i fits batches i, i+2, ...."""
    import numpy as np
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    rank = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    rows = np.arange(len(strategy_model.X)).reshape(-1, batch)[rank::2].ravel()
    tf.keras.backend.set_session(tf.Session())
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(
            1, input_shape=(3,), kernel_initializer=tf.constant_initializer(
                (strategy_model.W0 + rank).ravel()), bias_initializer="zeros")])
        model.compile(tf.keras.optimizers.SGD(strategy_model.LEARNING_RATE), "mse")
    model.fit(strategy_model.X[rows][:steps * batch], strategy_model.Y[rows][:steps * batch],
              batch_size=batch, epochs=1, shuffle=False, verbose=0)
    kernel, bias = model.get_weights()
    return {"rank": rank, "replicas": strategy.num_replicas_in_sync, "w": kernel.tolist(),
            "b": bias.tolist()}


def estimator_multi_worker(steps, batch):
    """tf.estimator with train_distribute=MultiWorkerMirroredStrategy, TF_CONFIG with a chief
    and a worker; the input_fn shards by its InputContext. The chief reports the checkpoint's
    w and b."""
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    rank = 0 if task["type"] == "chief" else 1 + int(task["index"])
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()

    def input_fn(input_context):
        return tf.data.Dataset.from_tensor_slices((strategy_model.X, strategy_model.Y)).shard(
            input_context.num_input_pipelines, input_context.input_pipeline_id).batch(batch)

    config = tf.estimator.RunConfig(model_dir=sys.argv[4], train_distribute=strategy,
                                    log_step_count_steps=None)
    estimator = tf.estimator.Estimator(strategy_model.estimator_model_fn(rank), config=config)
    estimator.train(input_fn, steps=steps)
    result = {"rank": rank, "replicas": strategy.num_replicas_in_sync}
    if rank == 0:
        result.update(w=estimator.get_variable_value("w").tolist(),
                      b=estimator.get_variable_value("b").tolist(),
                      global_step=int(estimator.get_variable_value("global_step")))
    return result


def parameter_server(steps, batch):
    strategy = tf.distribute.experimental.ParameterServerStrategy()
    rank = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    with strategy.scope():
        step_var = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", initializer=tf.zeros([3, 1]))
        dataset = tf.data.Dataset.from_tensor_slices(strategy_model.X).batch(batch)
        iterator = strategy.make_dataset_iterator(dataset)
        opt = tf.train.GradientDescentOptimizer(strategy_model.LEARNING_RATE)
        train_op = strategy.run(lambda x: opt.minimize(tf.reduce_mean(tf.matmul(x, w)),
                                                       global_step=step_var),
                                args=(iterator.get_next(),))
        train_op = strategy.group(train_op)
    total = steps * 2
    with tf.train.MonitoredTrainingSession(
            master=strategy.extended.session_target,
            is_chief=strategy.extended.experimental_should_init,
            config=strategy.update_config_proto(tf.ConfigProto())) as sess:
        sess.run(iterator.initialize())
        for _ in range(steps):
            sess.run(train_op)
        deadline = time.monotonic() + 30
        while sess.run(step_var) < total and time.monotonic() < deadline:
            time.sleep(0.05)
        w_value, step_value = sess.run([w, step_var])
    return {"rank": rank, "w": w_value.tolist(), "global_step": int(step_value),
            "device": w.device, "replicas": strategy.num_replicas_in_sync}


def main():
    kind, steps, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    result = {"mwms": multi_worker_mirrored, "keras": keras_multi_worker,
              "estimator": estimator_multi_worker, "ps": parameter_server}[kind](steps, batch)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
