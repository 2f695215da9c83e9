"""tf.train.sdca_fprint against FarmHash Fingerprint128 known answers, and
tf.train.sdca_optimizer: passes of SDCA, fed back, reach the closed-form ridge and elastic-net
solutions, NumPy Newton's logistic optimum, and a closed duality gap for the hinge losses."""
import numpy as np
import pytest

import tensorweave as tf

COVERED_OP_TYPES = {"SdcaFprint", "SdcaOptimizer"}


def run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


# FarmHash Fingerprint128 known answers (as TF's SdcaFprint gives them) covering every code
# path: empty, < 8, 8..16, > 16, the 128-byte loop and its 32-byte tail chunks.
FPRINT_INPUTS = [b"", b"abc", b"abcdefgh", b"0123456789abcdef", b"0123456789abcdefg",
                 b"The quick brown fox jumps over it", bytes(range(127)), bytes(range(128)),
                 bytes((i * 7) % 256 for i in range(200)),
                 bytes((i * 13 + 5) % 256 for i in range(300))]
FPRINT_ANSWERS = [
    [4463240938071824939, 4374473821787594281], [4143508125394299908, -6879828354153669051],
    [6985830856738084079, 6264954680145817547], [-2347567976820271828, -3177687296717892822],
    [-493211379155726600, 8911560780055707722], [5760039944195678515, 1399987062112781655],
    [4796251113509161169, 7054556971948026925], [-7458184564870852249, -2888668851988123742],
    [8882980837547139473, -6799909668380175280], [7410027489646937598, -7813439971383611294]]


def test_sdca_fprint_known_answers():
    fprint = tf.train.sdca_fprint(FPRINT_INPUTS)
    assert fprint.shape.as_list() == [10, 2] and fprint.dtype == tf.int64
    np.testing.assert_array_equal(run(fprint), FPRINT_ANSWERS)
    with pytest.raises(ValueError, match="must be a vector"):
        tf.train.sdca_fprint([[b"a"]])


def _sdca_fit(loss, features, labels, l1, l2, passes, adaptative=False, sparse=None):
    """Runs `passes` SDCA passes feeding back the deltas; returns (dense weights, sparse
    weights, final example state)."""
    count, width = features.shape
    x = tf.placeholder(tf.float32, [count, width])
    dense_w = tf.placeholder(tf.float32, [width])
    state_in = tf.placeholder(tf.float32, [count, 4])
    groups = ([], [], [], [], [])
    sparse_w = None
    if sparse is not None:                      # one sparse group: (example ids, feature ids,
        example_ids, feature_ids, values, size = sparse          # values, number of weights)
        sparse_w = tf.placeholder(tf.float32, [size])
        groups = ([example_ids], [feature_ids], [values], [np.arange(size)], [sparse_w])
    state, sparse_deltas, (dense_delta,) = tf.train.sdca_optimizer(
        groups[0], groups[1], groups[2], [x], np.ones(count, np.float32), labels, groups[3],
        groups[4], [dense_w], state_in, loss, l1, l2, 1, 1, adaptative=adaptative)
    w, v, s = np.zeros(width, np.float32), np.zeros(sparse[3] if sparse else 0, np.float32), \
        np.zeros((count, 4), np.float32)
    with tf.Session() as sess:
        for _ in range(passes):
            feeds = {x: features, dense_w: w, state_in: s}
            if sparse is not None:
                feeds[sparse_w] = v
                s, dw, (dv,) = sess.run([state, dense_delta, sparse_deltas], feeds)
                v = v + dv
            else:
                s, dw = sess.run([state, dense_delta], feeds)
            w = w + dw
    return w, v, s


SDCA_RNG = np.random.RandomState(0)
SDCA_X = SDCA_RNG.randn(40, 3).astype(np.float32)
SDCA_Y = (SDCA_X @ [1.0, -2.0, 0.5] + 0.1 * SDCA_RNG.randn(40)).astype(np.float32)


def test_sdca_squared_loss_reaches_the_ridge_solution():
    # A dense group of 3 features and a sparse group: example i has feature i % 4, value 1.5.
    ids = np.arange(40, dtype=np.int64)
    sparse = (ids, ids % 4, np.full(40, 1.5, np.float32), 4)
    w, v, _ = _sdca_fit("squared_loss", SDCA_X, SDCA_Y, 0.0, 2.0, 80, sparse=sparse)
    design = np.concatenate([SDCA_X, 1.5 * np.eye(4)[ids % 4]], 1).astype(np.float64)
    want = np.linalg.solve(design.T @ design + 2.0 * np.eye(7), design.T @ SDCA_Y)
    np.testing.assert_allclose(np.concatenate([w, v]), want, atol=2e-3)


def test_sdca_elastic_net_and_logistic_match_their_optima():
    l1, l2 = 3.0, 2.0
    v, _, _ = _sdca_fit("squared_loss", SDCA_X, SDCA_Y, l1, l2, 80)
    beta = np.sign(v) * np.maximum(np.abs(v) - l1 / l2, 0)    # the model's weights: shrink(v)
    ref = np.zeros(3)          # coordinate descent on sum (x.b - y)^2 / 2 + l2/2 |b|^2 + l1 |b|
    for _ in range(500):
        for j in range(3):
            rest = SDCA_Y - SDCA_X @ ref + SDCA_X[:, j] * ref[j]
            rho = SDCA_X[:, j] @ rest
            ref[j] = np.sign(rho) * max(abs(rho) - l1, 0) / (SDCA_X[:, j] @ SDCA_X[:, j] + l2)
    np.testing.assert_allclose(beta, ref, atol=2e-3)

    labels = (SDCA_X @ [1.0, -1.0, 0.5] + 0.5 * SDCA_RNG.randn(40) > 0).astype(np.float32)
    signs = 2 * labels - 1
    for adaptative in (False, True):
        w, _, state = _sdca_fit("logistic_loss", SDCA_X, labels, 0.0, 1.0, 60, adaptative)
        ref = np.zeros(3)      # Newton on sum log(1 + exp(-y x.w)) + |w|^2 / 2
        for _ in range(30):
            p = 1 / (1 + np.exp(signs * (SDCA_X @ ref)))
            grad = -(SDCA_X * (signs * p)[:, None]).sum(0) + ref
            hess = (SDCA_X * (p * (1 - p))[:, None]).T @ SDCA_X + np.eye(3)
            ref -= np.linalg.solve(hess, grad)
        np.testing.assert_allclose(w, ref, atol=2e-3)
        assert np.all(state[:, 3] == 1.0) and np.all(state[:, 0] * signs >= 0)


def test_sdca_hinge_losses_close_the_duality_gap():
    labels = (SDCA_X[:, 0] - SDCA_X[:, 1] > 0).astype(np.float32)
    for loss in ("hinge_loss", "smooth_hinge_loss"):
        w, _, state = _sdca_fit(loss, SDCA_X, labels, 0.0, 1.0, 60)
        primal = state[:, 1].sum() + 0.5 * w @ w     # losses at the last pass's weights
        dual = -state[:, 2].sum() - 0.5 * w @ w
        assert abs(primal - dual) < 0.05 * primal, (loss, primal, dual)


def test_sdca_bad_input_is_named():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Only labels of 0.0 or 1.0"):
        _sdca_fit("logistic_loss", SDCA_X, SDCA_Y, 0.0, 1.0, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="example_state_data"):
        run(tf.train.sdca_optimizer([], [], [], [SDCA_X], np.ones(40), SDCA_Y, [], [],
                                    [np.zeros(3)], np.zeros((39, 4)), "squared_loss", 0.0,
                                    1.0, 1, 1))
    with pytest.raises(ValueError, match="unsupported loss_type"):
        tf.train.sdca_optimizer([], [], [], [SDCA_X], np.ones(40), SDCA_Y, [], [],
                                [np.zeros(3)], np.zeros((40, 4)), "poisson", 0.0, 1.0, 1, 1)
