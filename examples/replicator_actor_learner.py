"""An actor/learner loop with TF-Replicator: actor threads act with the learner's current
parameters and feed their experience into a queue on the learner; the learner, replicated
over the CPU devices, dequeues one batch per replica a step and trains on it.

    python examples/replicator_actor_learner.py --replicas 2 --steps 300

The task is a continuous bandit: a state s (4 numbers), an action a (2 numbers), reward
-|a - W s|^2 with W unknown. The learner fits a critic Q(s, a) = c - |a - V s|^2 to the
rewards; its greedy policy is a = V s, which the actors follow with exploration noise (unit normal). As V
approaches W, the greedy policy's reward rises toward 0; the script prints it.
"""
import argparse
import threading

import numpy as np

import tensorweave as tf
from tensorweave import replicator

STATE, ACTION, ACTOR_BATCH = 4, 2, 16
TRUE_W = np.random.default_rng(3).standard_normal((ACTION, STATE)).astype(np.float32)


def reward(states, actions):
    return -tf.reduce_sum(tf.square(actions - tf.matmul(states, TRUE_W.T)), 1)


def build(repl, batch):
    """(the actors' enqueue op, per-replica train ops, greedy reward, queue)."""
    with repl.context():
        policy = tf.get_variable("policy", [ACTION, STATE], initializer=tf.zeros_initializer())
        offset = tf.get_variable("offset", [], initializer=tf.zeros_initializer())
        queue = tf.FIFOQueue(1024, [tf.float32, tf.float32, tf.float32],
                             shapes=[[STATE], [ACTION], []], name="experience")
        optimizer = repl.wrap_optimizer(tf.train.AdamOptimizer(0.05))

    states = tf.random_normal([ACTOR_BATCH, STATE])
    actions = tf.matmul(states, policy, transpose_b=True) + \
        tf.random_normal([ACTOR_BATCH, ACTION])
    enqueue = queue.enqueue_many([states, actions, reward(states, actions)])
    greedy = tf.reduce_mean(reward(states, tf.matmul(states, policy, transpose_b=True)))

    def input_fn(replica_id):
        return lambda: queue.dequeue_many(batch)

    def step_fn(experience):
        s, a, r = experience
        critic = offset - tf.reduce_sum(tf.square(a - tf.matmul(s, policy, transpose_b=True)), 1)
        return optimizer.minimize(tf.reduce_mean(tf.square(critic - r)))

    return enqueue, repl.run(step_fn, input_fn), greedy, queue


def actor(sess, coord, enqueue):
    try:
        while not coord.should_stop():
            sess.run(enqueue)
    except tf.errors.CancelledError:
        pass  # the learner closed the queue
    except Exception as exc:  # noqa: BLE001 - handed to the coordinator, re-raised by join
        coord.request_stop(exc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32, help="transitions per replica a step")
    args = parser.parse_args()
    repl = replicator.MultiDeviceReplicator(args.replicas)
    enqueue, train_ops, greedy, queue = build(repl, args.batch)
    close = queue.close(cancel_pending_enqueues=True)
    with tf.Session(config=repl.session_config()) as sess:
        repl.init(sess)
        print(f"greedy reward before: {sess.run(greedy):.3f}", flush=True)
        coord = tf.train.Coordinator()
        actors = [threading.Thread(target=actor, args=(sess, coord, enqueue), daemon=True)
                  for _ in range(args.actors)]
        for thread in actors:
            thread.start()
        try:
            for step in range(1, args.steps + 1):
                sess.run(train_ops)
                if step % 100 == 0 or step == args.steps:
                    print(f"step {step}: greedy reward {sess.run(greedy):.3f}", flush=True)
        finally:
            coord.request_stop()
            sess.run(close)
            coord.join(actors, stop_grace_period_secs=10)
        repl.shutdown(sess)


if __name__ == "__main__":
    main()
