"""A vocabulary table inside tf.data's map (issue 14, the NMT tutorial's source pipeline)
against the workaround it replaces: the lookup applied to get_next() in the session.

    python benchmarks/bench_data_resources.py [--rounds 5] [--sentences 2000]
    python benchmarks/bench_data_resources.py --call-cost-only --tree CHECKOUT

It first measures the cost of one call of a traced per-element map function (MNIST's
`reshape(cast(x)/255, [784])` on a uint8 28x28 image), microseconds per call; `--tree` runs
that against another checkout of the repository (e.g. the commit before issue 14's change,
whose functions ran through a private Session), for the comparison in BENCHMARKS.md.

Both read the same text file of sentences through TextLineDataset, split them into words and
pad batches of 64; "in map" looks the words up in `map` (index_table_from_file, one OOV
bucket) before padding, "after get_next" pads the words and looks the batch up in the step.
Rates are sentences per second over a whole epoch, the two alternating within each round; the
ratio is the median of the per-round ratios (the stable quantity on a shared machine).
"""
import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_TREE = sys.argv[sys.argv.index("--tree") + 1] if "--tree" in sys.argv else os.path.dirname(HERE)
sys.path.insert(0, _TREE)

import tensorweave as tf  # noqa: E402

BATCH = 64


def _write_corpus(directory, sentences, vocab_size=10000, words_per_sentence=20):
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(vocab_size)]
    vocab_file = os.path.join(directory, "vocab.txt")
    with open(vocab_file, "w") as out:
        out.write("\n".join(vocab) + "\n")
    text_file = os.path.join(directory, "src.txt")
    with open(text_file, "w") as out:  # a tenth of the words are out of the vocabulary
        for _ in range(sentences):
            ids = rng.integers(0, vocab_size * 11 // 10, words_per_sentence)
            out.write(" ".join(f"w{i}" for i in ids) + "\n")
    return vocab_file, text_file


def _pipelines(vocab_file, text_file):
    table = tf.contrib.lookup.index_table_from_file(vocab_file, num_oov_buckets=1)
    words = tf.data.TextLineDataset(text_file).map(lambda line: tf.string_split([line]).values)
    in_map = words.map(lambda w: tf.cast(table.lookup(w), tf.int32)).padded_batch(
        BATCH, padded_shapes=[None]).prefetch(2).make_initializable_iterator()
    after = words.padded_batch(BATCH, padded_shapes=[None]).prefetch(
        2).make_initializable_iterator()
    looked_up_after = tf.cast(table.lookup(after.get_next()), tf.int32)
    return {"in map": (in_map, in_map.get_next()), "after get_next": (after, looked_up_after)}


def _epoch_rate(sess, iterator, batch, sentences):
    sess.run(iterator.initializer)
    start = time.perf_counter()
    count = 0
    while True:
        try:
            count += len(sess.run(batch))
        except tf.errors.OutOfRangeError:
            break
    assert count == sentences, (count, sentences)
    return count / (time.perf_counter() - start)


def _call_cost(rounds, calls=5000):
    """Microseconds per call of a traced, not elementwise, function on one element."""
    from tensorweave.data.functions import StructuredFunction
    from tensorweave.data.structure import TensorSpec
    spec = (TensorSpec([28, 28], tf.uint8), TensorSpec([], tf.int64))
    with tf.Graph().as_default():
        function = StructuredFunction(
            lambda x, y: (tf.reshape(tf.cast(x, tf.float32) / 255.0, [784]), y), spec, "map")
    element = (np.zeros((28, 28), np.uint8), np.int64(3))
    function(element)
    costs = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            function(element)
        costs.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(costs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--tree", default=_TREE, help="the checkout to import tensorweave from")
    parser.add_argument("--call-cost-only", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {platform.machine()} {platform.python_version()} numpy {np.__version__} cores "
          f"{os.cpu_count()} load={load:.1f} tensorweave from {os.path.dirname(tf.__file__)}")
    print(f"traced per-element map function: {_call_cost(args.rounds):.1f} us per call "
          f"(median of {args.rounds} rounds of 5,000 calls)")
    if args.call_cost_only:
        return
    with tempfile.TemporaryDirectory() as directory:
        vocab_file, text_file = _write_corpus(directory, args.sentences)
        with tf.Graph().as_default():
            pipelines = _pipelines(vocab_file, text_file)
            rates = {name: [] for name in pipelines}
            with tf.Session() as sess:
                sess.run(tf.tables_initializer())
                for name, (iterator, batch) in pipelines.items():  # warm-up epoch each
                    _epoch_rate(sess, iterator, batch, args.sentences)
                for _ in range(args.rounds):
                    for name, (iterator, batch) in pipelines.items():
                        rates[name].append(_epoch_rate(sess, iterator, batch, args.sentences))
    print(f"# {args.sentences} sentences of 20 words, batch {BATCH}, vocabulary 10,000 words "
          f"from a file; sentences/s over an epoch, median of {args.rounds} rounds")
    for name, values in rates.items():
        print(f"lookup {name:16s} {statistics.median(values):10,.0f} sentences/s")
    ratios = [a / b for a, b in zip(rates["in map"], rates["after get_next"])]
    print(f"in map / after get_next (median of per-round ratios): "
          f"{statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
