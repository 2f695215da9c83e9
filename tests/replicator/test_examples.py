"""The replicator examples, each run as a program for a few steps (bounded time), and the GAN
example's cross-replica batch norm against NumPy batch norm over the replicas' batches."""
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import replicator
from tests.collective.rank_util import REPO, _environment, _finish
from tests.mnist_data import require_mnist

pytestmark = pytest.mark.timeout(120)
EXAMPLES = os.path.join(REPO, "examples")


def run_example(name, *args, launcher=()):
    """The example's output; it runs in its own process group, killed whole (ranks that
    `tensorweave run` started included) if it outlives the time bound."""
    process = subprocess.Popen([sys.executable, *launcher, os.path.join(EXAMPLES, name), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=_environment(), cwd=REPO, start_new_session=True)
    [(code, out)] = _finish([process], 100)
    assert code == 0, out
    return out


def test_mnist_cnn_learns_on_two_replicas():
    out = run_example("replicator_mnist.py", "--replicas", "2", "--steps", "80",
                      "--data_dir", require_mnist())
    accuracy = float(re.search(r"test accuracy ([\d.]+) \(2 replicas", out).group(1))
    assert accuracy > 0.85, out


def test_mnist_cnn_with_one_replica_per_process_under_tensorweave_run():
    out = run_example("replicator_mnist.py", "--mode", "allreduce", "--steps", "60",
                      "--data_dir", require_mnist(),
                      launcher=("-m", "tensorweave.cli.main", "run", "-np", "2",
                                sys.executable))
    found = dict(re.findall(r"\[(\d)\] test accuracy ([\d.]+) \(2 replicas", out))
    assert sorted(found) == ["0", "1"] and found["0"] == found["1"], out
    assert float(found["0"]) > 0.8, out


def test_gan_with_two_optimizers_and_cross_replica_batch_norm_matches_the_data():
    out = run_example("replicator_gan.py", "--replicas", "2", "--steps", "200")
    mean, std = map(float, re.findall(r"step 200: generated mean ([-\d.]+) std ([\d.]+)",
                                      out)[0])
    assert abs(mean - 3.0) < 0.5 and 0.1 < std < 1.5, out


def test_actors_feed_the_learner_through_a_queue():
    out = run_example("replicator_actor_learner.py", "--replicas", "2", "--steps", "150")
    before = float(re.search(r"greedy reward before: ([-\d.]+)", out).group(1))
    after = float(re.search(r"step 150: greedy reward ([-\d.]+)", out).group(1))
    assert before < -3.0 and after > -0.5, out


def _gan_module():
    spec = importlib.util.spec_from_file_location("replicator_gan",
                                                  os.path.join(EXAMPLES, "replicator_gan.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cross_replica_batch_norm_is_batch_norm_over_every_replica():
    gan = _gan_module()
    rng = np.random.default_rng(5)
    batches = rng.normal(2.0, 3.0, (2, 6, 4)).astype(np.float32)
    weights = rng.standard_normal((2, 6, 4)).astype(np.float32)
    tf.reset_default_graph()
    repl = replicator.MultiDeviceReplicator(2)

    def step_fn():
        x = tf.gather(tf.constant(batches), repl.replica_id)
        normed = gan.cross_replica_batch_norm(x, "bn")
        loss = tf.reduce_sum(normed * tf.gather(tf.constant(weights), repl.replica_id))
        return normed, tf.gradients(loss, x)[0]

    out = repl.run(step_fn)
    with tf.Session(config=repl.session_config()) as sess:
        repl.init(sess)
        got = sess.run(out)
    everything = batches.reshape(12, 4).astype(np.float64)
    mean, var = everything.mean(0), everything.var(0)
    expected = (everything - mean) / np.sqrt(var + 1e-3)
    np.testing.assert_allclose(np.concatenate([n for n, _ in got]), expected, rtol=1e-4,
                               atol=1e-4)
    # d(sum of both replicas' losses)/dx: batch norm's gradient over the whole batch.
    g = weights.reshape(12, 4)
    grad = (g - g.mean(0) - expected * (g * expected).mean(0)) / np.sqrt(var + 1e-3)
    np.testing.assert_allclose(np.concatenate([d for _, d in got]), grad, rtol=1e-3,
                               atol=1e-4)
