"""The standard SessionRunHooks, each in a MonitoredSession on a tiny model whose global step
and loss are known in closed form."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.timeout(60)


def _counter():
    """global_step, a train op adding 1 to it, and loss = 10 - global_step."""
    step = tf.train.get_or_create_global_step()
    train = tf.assign_add(step, 1)
    loss = tf.cast(10 - step, tf.float32)
    return step, train, loss


def _run_until_stop(hooks, train, **kwargs):
    runs = 0
    with tf.train.MonitoredSession(hooks=hooks, **kwargs) as sess:
        while not sess.should_stop():
            sess.run(train)
            runs += 1
    return runs


def test_stop_at_step_hook_counts_from_where_training_is():
    step, train, _ = _counter()
    assert _run_until_stop([tf.train.StopAtStepHook(last_step=7)], train) == 7
    hook = tf.train.StopAtStepHook(num_steps=3)
    assert _run_until_stop([hook], train) == 3 and hook.last_step == 3
    with pytest.raises(ValueError):
        tf.train.StopAtStepHook(num_steps=1, last_step=2)


def test_hooks_need_a_global_step():
    tf.Variable(0, name="not_a_step")
    with pytest.raises(RuntimeError, match="Global step should be created"):
        tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=1)])


def test_checkpoint_saver_hook_saves_at_start_every_n_steps_and_at_end(tmp_path):
    _, train, _ = _counter()
    saver_hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=4)
    _run_until_stop([saver_hook, tf.train.StopAtStepHook(last_step=10)], train)
    assert saver_hook.saved_steps == [0, 4, 8, 10]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-10")
    with pytest.raises(ValueError, match="exactly one"):
        tf.train.CheckpointSaverHook(str(tmp_path))


def test_checkpoint_saver_listener_is_called_and_can_stop_training(tmp_path):
    _, train, _ = _counter()
    calls = []

    class Listener(tf.train.CheckpointSaverListener):
        def before_save(self, session, global_step_value):
            calls.append(("before", global_step_value))

        def after_save(self, session, global_step_value):
            calls.append(("after", global_step_value))
            return global_step_value >= 2

    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[Listener()])
    assert _run_until_stop([hook], train) == 2
    assert calls[:4] == [("before", 0), ("after", 0), ("before", 2), ("after", 2)]


def test_step_counter_hook_measures_steps_per_second():
    _, train, _ = _counter()
    hook = tf.train.StepCounterHook(every_n_steps=5)
    _run_until_stop([hook, tf.train.StopAtStepHook(last_step=16)], train)
    assert len(hook.rates) == 3 and all(rate > 0 for rate in hook.rates)


def test_logging_tensor_hook_logs_every_n_iterations_and_at_end():
    step, train, loss = _counter()
    hook = tf.train.LoggingTensorHook({"loss": loss, "step": step}, every_n_iter=3, at_end=True)
    _run_until_stop([hook, tf.train.StopAtStepHook(last_step=7)], train)
    # Fetched with the train op in the same step: the value before or after its update.
    assert len(hook.logged) == 4 and hook.logged[-1] == {"loss": 3.0, "step": 7}
    formatted = []
    hook = tf.train.LoggingTensorHook([loss], at_end=True,
                                      formatter=lambda values: formatted.append(values) or "")
    _run_until_stop([hook, tf.train.StopAtStepHook(num_steps=1)], train)  # a new session
    assert formatted == [{loss.name: 9.0}]


def test_nan_tensor_hook_fails_or_stops():
    step = tf.train.get_or_create_global_step()
    train = tf.assign_add(step, 1)
    loss = tf.where(train >= 2, np.nan, 1.0)  # NaN from the second step on
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        _run_until_stop([tf.train.NanTensorHook(loss)], loss)
    assert _run_until_stop([tf.train.NanTensorHook(loss, fail_on_nan_loss=False)], loss) == 2


def test_final_ops_hook_and_feed_fn_hook():
    x = tf.placeholder(tf.float32, [])
    total = tf.Variable(0.0)
    add = tf.assign_add(total, x)
    tf.train.get_or_create_global_step()
    feeds = iter([1.0, 2.0, 3.0])
    final = tf.train.FinalOpsHook(total.value())
    feeder = tf.train.FeedFnHook(lambda: {x: next(feeds)})
    with tf.train.MonitoredSession(hooks=[final, feeder]) as sess:
        for _ in range(3):
            sess.run(add)
        with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
            sess.run(add, {x: 1.0})
    assert final.final_ops_values == 6.0


def test_global_step_waiter_hook_holds_the_first_step_until_the_step_is_reached():
    step = tf.train.get_or_create_global_step()
    bump = tf.assign_add(step, 1)
    waiter = tf.train.GlobalStepWaiterHook(wait_until_step=3)
    with tf.train.MonitoredSession(hooks=[waiter]) as sess:
        raw = sess._tf_sess()

        def chief():
            for _ in range(3):
                time.sleep(0.1)
                raw.run(bump)

        thread = threading.Thread(target=chief)
        start = time.monotonic()
        thread.start()
        assert sess.run(step) >= 3
        assert time.monotonic() - start >= 0.25
        thread.join()


def test_second_or_step_timer():
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert not timer.should_trigger_for_step(2) and timer.should_trigger_for_step(3)
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(3)
    assert elapsed_steps == 3 and elapsed_secs >= 0
    with pytest.raises(ValueError):
        tf.train.SecondOrStepTimer()
