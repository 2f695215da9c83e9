"""hvd.elastic's states and run loop in one process (a job of one rank): what commit saves,
what restore brings back, and that run() rolls back and calls the function again after a
membership failure, but lets any other error through."""
import numpy as np
import pytest

import tensorweave as tf
import tensorweave.horovod as hvd
from tensorweave import collective


@pytest.fixture
def one_rank(monkeypatch):
    for name in ("TENSORWEAVE_RANK", "TENSORWEAVE_SIZE", "TENSORWEAVE_COORDINATOR",
                 "TENSORWEAVE_ELASTIC_RENDEZVOUS", "TF_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    hvd.init()
    yield
    hvd.shutdown()


def test_object_state_saves_deep_copies():
    state = hvd.elastic.ObjectState(epoch=0, history=[])
    state.epoch, state.history = 1, [1.0]
    state.save()
    state.epoch = 2
    state.history.append(2.0)
    state.restore()
    assert (state.epoch, state.history) == (1, [1.0])
    state.history.append(3.0)
    state.restore()  # the saved copy did not change with the attribute
    assert state.history == [1.0]


def test_run_rolls_back_to_the_last_commit_after_a_membership_failure(one_rank):
    with tf.Graph().as_default():
        weight = tf.Variable(np.float32(1.0))
        double = tf.assign(weight, weight * 2.0)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            state = hvd.elastic.TensorFlowState([weight], session=session, step=0)
            resets, calls = [], []
            state.register_reset_callbacks([lambda: resets.append(state.step)])

            @hvd.elastic.run
            def train(state, fail_at):
                calls.append(state.step)
                while state.step < 5:
                    session.run(double)
                    state.step += 1
                    if state.step % 2 == 0:
                        state.commit()
                    if state.step == fail_at and len(calls) == 1:
                        raise hvd.HorovodInternalError("a rank died")
                return state.step

            assert train(state, 3) == 5
            # Steps 1-2 committed; step 3 was rolled back and done again.
            assert calls == [0, 2] and resets == [2]
            assert session.run(weight) == 2.0 ** 5
            assert collective.is_initialized()


def test_run_lets_other_errors_through(one_rank):
    state = hvd.elastic.ObjectState(step=0)

    @hvd.elastic.run
    def train(state):
        raise ValueError("a bug in the training function")

    with pytest.raises(ValueError, match="a bug"):
        train(state)


def test_tensorflow_state_needs_its_session():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="needs the session"):
            hvd.elastic.TensorFlowState([tf.Variable(1.0)])
