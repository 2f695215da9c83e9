"""tf.keras LSTM/GRU benchmark: training steps/s of a Keras recurrent classifier, tensorweave's
fused layer (one _KerasLSTMSequence/_KerasGRUSequence op) vs its unrolled loop vs TensorFlow 2.21
(`tf.compat.v1` graph mode with its tf_keras layers), alternating in one run; each sample runs
in a fresh process (see _sample_in_subprocess).

    python benchmarks/bench_keras_rnn.py                     # tensorweave fused vs unrolled
    ln -sfn /work/tfvenv benchmarks/.venv-tf                 # TF 2.21 + tf_keras, read-only
    python benchmarks/bench_keras_rnn.py --compare-tf        # adds TF (re-runs in that venv,
                                                             # tensorweave from this checkout)
    rm benchmarks/.venv-tf

Model: 28 time steps of 28 inputs (MNIST rows), batch 128, one Keras LSTM (or GRU) layer of 128
units, Dense(10) on its last output, sparse softmax cross entropy, tf.train.AdamOptimizer(1e-3),
one session.run per step. The recurrent activation is `sigmoid` on every row (TF 2's default,
so TF's layer runs its standard kernel); GRU uses reset_after=True (TF 2's default) on all rows.
"Unrolled" is the same layer with an LSTMCell/GRUCell subclass, which keeps tensorweave's
per-step ops (the fused path takes only the plain cells). The TF venv is only read: tensorweave
is put on sys.path, nothing is installed into it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from importlib import metadata

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_lstm import (alternate, measure_training,  # noqa: E402 - the LSTM benchmark's
                        training_steps)  # model and loops

HERE = os.path.dirname(os.path.abspath(__file__))
TF_PYTHON = os.path.join(HERE, ".venv-tf", "bin", "python")
BATCH, STEPS, INPUTS, UNITS, CLASSES = 128, 28, 28, 128, 10


def classifier(tf, keras, kind, unrolled):
    """(setup, step) of the model built with `tf` (compat.v1-shaped) and `keras`."""
    x = tf.placeholder(tf.float32, [BATCH, STEPS, INPUTS])
    labels = tf.placeholder(tf.int64, [BATCH])
    options = {"recurrent_activation": "sigmoid"}
    if kind == "gru":
        options["reset_after"] = True
    if unrolled:
        base = keras.layers.LSTMCell if kind == "lstm" else keras.layers.GRUCell
        cell = type("UnrolledCell", (base,), {})(UNITS, **options)
        layer = keras.layers.RNN(cell)
    else:
        layer = (keras.layers.LSTM if kind == "lstm" else keras.layers.GRU)(UNITS, **options)
    logits = keras.layers.Dense(CLASSES)(layer(x))
    return training_steps(tf, np.random.default_rng(0), x, labels, logits)


def measure(tf, keras, kind, unrolled, steps, seconds_floor):
    """(steps/s, CPU ms per step, first and last loss) of a fresh graph, after a warm-up."""
    return measure_training(tf, lambda: classifier(tf, keras, kind, unrolled), steps,
                            seconds_floor)


def _sample(variant, args):
    """One measurement of `variant` (fused, unrolled, tf) in this process."""
    if variant == "tf":
        tf, keras, _ = _tensorflow()
    else:
        import tensorweave as tf
        keras = tf.keras
    return measure(tf, keras, args.cell, variant == "unrolled", args.steps, args.seconds)


def _sample_in_subprocess(variant, args):
    """_sample in a fresh process: TF's spinning pool threads, left in a process that ran TF,
    took tensorweave from 16 to 7.5 steps/s when both ran in one process."""
    command = [sys.executable, __file__, "--in-venv", "--sample", variant, "--cell", args.cell,
               "--steps", str(args.steps), "--seconds", str(args.seconds)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow
    import tf_keras
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1, tf_keras, tensorflow.__version__


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-tf", action="store_true")
    parser.add_argument("--cell", choices=["lstm", "gru"], default="lstm")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3, help="steps per timing batch")
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum seconds per sample")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sample", choices=["fused", "unrolled", "tf"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare_tf and not args.in_venv:
        if not os.path.exists(TF_PYTHON):
            sys.exit(f"--compare-tf needs TF 2.21 with tf_keras at {TF_PYTHON}: "
                     "ln -sfn /work/tfvenv benchmarks/.venv-tf")
        os.environ["PYTHONPATH"] = os.path.dirname(HERE)
        os.execv(TF_PYTHON, [TF_PYTHON, __file__, "--in-venv"] + sys.argv[1:])
    if args.sample:
        print(json.dumps([float(value) for value in _sample(args.sample, args)]))
        return
    variants = [(f"tensorweave, fused {args.cell.upper()} layer", "fused"),
                (f"tensorweave, unrolled {args.cell.upper()}Cell", "unrolled")]
    if args.compare_tf:
        variants.append((f"tensorflow {metadata.version('tensorflow')} + tf_keras "
                         f"{metadata.version('tf_keras')}", "tf"))
    samples, cpu_ms, losses = alternate(
        [(label, lambda variant=variant: _sample_in_subprocess(variant, args))
         for label, variant in variants], args.rounds, args.seconds)
    medians = {label: statistics.median(values) for label, values in samples.items()}
    reference = medians[variants[-1][0]]
    print(f"\n| Keras {args.cell.upper()} {UNITS} units, {STEPS} steps x {INPUTS} inputs, batch "
          f"{BATCH}, Adam | training steps/s (median) | range | vs {variants[-1][0]} | "
          "CPU ms/step | loss first -> last |")
    print("|---|---|---|---|---|---|")
    for label, *_ in variants:
        print(f"| {label} | {medians[label]:.1f} | {min(samples[label]):.1f}-"
              f"{max(samples[label]):.1f} | {medians[label] / reference:.2f}x | "
              f"{statistics.median(cpu_ms[label]):.1f} | {losses[label][0]:.3f} -> "
              f"{losses[label][1]:.3f} |")


if __name__ == "__main__":
    main()
