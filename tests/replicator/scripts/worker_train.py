"""One worker of a MultiWorkerReplicator job (mode from argv[1]): trains the shared test
model for argv[2] steps and prints its parameters as a RESULT line. Under mode allreduce the
cluster comes from `tensorweave run`'s environment; the ps modes read TF_CONFIG."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))

import tensorweave as tf  # noqa: E402
from tensorweave import replicator  # noqa: E402
from tests.replicator import model_util  # noqa: E402


def main():
    mode, steps, optimizer = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    repl = replicator.MultiWorkerReplicator(mode=mode)
    with tf.Session(repl.target) as sess:
        wait = steps * repl.num_replicas if mode == "ps_async" else 0
        w1, w2 = model_util.train(repl, sess, steps, optimizer, wait)
        repl.shutdown(sess)
    print("RESULT " + json.dumps({"rank": repl.worker_index, "w1": w1.tolist(),
                                  "w2": w2.tolist(), "replicas": repl.num_replicas}),
          flush=True)


if __name__ == "__main__":
    main()
