"""One task of the encoded-transfer test across namespace hosts: a ps that serves until killed,
or a worker that reads a float32 tensor held on the ps once per wire encoding (a traced step
each) and prints one JSON line: per encoding, the largest error, the bound the transfer
reported and the step stats' label of the transfer.

    python encoded_transfer.py --cluster JSON --job ps|worker
"""
import argparse
import json
import sys

import numpy as np

import tensorweave as tf

ELEMENTS = 600_007  # odd, over two chunks of wire.CHUNK_ELEMENTS: a short last chunk
ENCODINGS = ("float16", "bfloat16", "int8")


def values():
    return (np.random.default_rng(7).standard_normal(ELEMENTS) * 3).astype(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--job", required=True)
    args = parser.parse_args()
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.train.Server(cluster, args.job, 0)
    if args.job == "ps":
        print("serving", flush=True)
        server.join()
        return 0
    with tf.device("/job:ps/task:0"):
        source = tf.identity(tf.constant(values()))  # computed on the ps, sent from there
    with tf.device("/job:worker/task:0"):
        received = tf.identity(source)
    report = {}
    for encoding in ENCODINGS:
        config = tf.ConfigProto(rpc_options=tf.RPCOptions(tensor_wire_encoding=encoding))
        with tf.Session(server.target, config=config) as sess:
            metadata = tf.RunMetadata()
            out = sess.run(received, options=tf.RunOptions(trace_level=3),
                           run_metadata=metadata)
        labels = [n.get("label", "") for d in metadata.step_stats.dev_stats
                  for n in d["node_stats"] if "RecvTensor" in n.get("op", "")]
        report[encoding] = {"error": float(np.max(np.abs(out.astype(np.float64) - values()))),
                            "dtype": str(out.dtype), "labels": labels}
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
