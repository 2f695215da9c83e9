"""An elastic rank for tests/elastic: SGD on a loss whose gradient depends on the rank, plus a
counter that adds the job's size each step, under hvd.elastic.run with a commit every
COMMIT steps. Prints "step K size S rank R pid P" per step, "reset at step K" after a re-form,
and at the end "RESULT {json}" with the variables and the committed per-step sizes, from
which the test predicts the final values exactly.

    python elastic_train.py STEPS COMMIT STEP_SECONDS [SLOW_FILE]

While SLOW_FILE exists each step takes a second, so a test can keep the job running until
a rank it added has joined.
"""
import json
import os
import sys
import time

import tensorweave as tf
import tensorweave.horovod as hvd

STEPS, COMMIT, STEP_SECONDS = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
SLOW_FILE = sys.argv[4] if len(sys.argv) > 4 else None
LEARNING_RATE = 0.25

hvd.init()
weight = tf.Variable(10.0, name="weight")
counter = tf.Variable(0.0, name="counter")
rank_feed = tf.placeholder(tf.float32, [], name="rank")
# Rank r pulls the weight towards r: the averaged gradient pulls it towards (size - 1) / 2.
loss = 0.5 * tf.square(weight - rank_feed)
train_op = hvd.DistributedOptimizer(
    tf.train.GradientDescentOptimizer(LEARNING_RATE)).minimize(loss)
size_now = hvd.allreduce(tf.ones([]), op=hvd.Sum, name="size_now")
count_op = tf.assign_add(counter, size_now)

session = tf.Session()
session.run(tf.global_variables_initializer())
state = hvd.elastic.TensorFlowState([weight, counter], session=session, step=0, sizes=[])
state.register_reset_callbacks([lambda: print(f"reset at step {state.step} size "
                                              f"{hvd.size()} rank {hvd.rank()}", flush=True)])


@hvd.elastic.run
def train(state):
    print(f"synced at step {state.step} rank {hvd.rank()} pid {os.getpid()}", flush=True)
    while state.step < STEPS:
        session.run(train_op, feed_dict={rank_feed: float(hvd.rank())})
        session.run(count_op)
        state.sizes.append(hvd.size())
        state.step += 1
        print(f"step {state.step} size {hvd.size()} rank {hvd.rank()} pid {os.getpid()}",
              flush=True)
        if state.step % COMMIT == 0:
            state.commit()
        time.sleep(1.0 if SLOW_FILE and os.path.exists(SLOW_FILE) else STEP_SECONDS)
    state.commit()


train(state)
weight_value, counter_value = session.run([weight, counter])
print("RESULT " + json.dumps({"weight": float(weight_value), "counter": float(counter_value),
                              "sizes": state.sizes, "step": state.step,
                              "rank": hvd.rank(), "size": hvd.size()}), flush=True)
hvd.shutdown()
