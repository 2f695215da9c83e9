"""Summaries during training: SummarySaverHook, StepCounterHook's global_step/sec and
MonitoredTrainingSession(save_summaries_steps/secs, summary_dir), read back from the event
files."""
import glob
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train.session_run_hook import SessionRunValues

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()  # joins their threads


def _events(logdir):
    files = glob.glob(os.path.join(str(logdir), "*tfevents*"))
    assert len(files) == 1, files
    return list(tf.train.summary_iterator(files[0]))


def _scalars(events, tag):
    return [(event.step, value.simple_value) for event in events
            for value in event.summary.value if value.tag == tag]


def _model():
    """global_step += 1 per run, and a summary of the fed run index."""
    step = tf.train.get_or_create_global_step()
    train = tf.assign_add(step, 1)
    run_index = tf.placeholder(tf.float32, [], name="index")
    summary = tf.summary.scalar("run_index", run_index)
    return train, run_index, summary


def _train(session, train, run_index, runs):
    for index in range(runs):
        session.run(train, {run_index: index})


def test_summary_saver_hook_writes_every_n_steps_at_the_global_step(tmp_path):
    train, run_index, summary = _model()
    hook = tf.train.SummarySaverHook(save_steps=3, output_dir=str(tmp_path), summary_op=summary)
    with tf.train.MonitoredSession(hooks=[hook]) as session:
        _train(session, train, run_index, 10)
    events = _events(tmp_path)
    # Global step s is reached by run s - 1: its summary holds that run's fed value.
    assert _scalars(events, "run_index") == [(1, 0.0), (4, 3.0), (7, 6.0), (10, 9.0)]
    logs = [(event.step, event.session_log.status) for event in events
            if event.HasField("session_log")]
    assert logs == [(1, tf.SessionLog.START)]


def test_summary_saver_hook_by_seconds_and_with_its_own_writer(tmp_path):
    train, run_index, summary = _model()
    writer = tf.summary.FileWriter(str(tmp_path))
    hook = tf.train.SummarySaverHook(save_secs=3600, summary_writer=writer,
                                     summary_op=[summary])
    with tf.train.MonitoredSession(hooks=[hook]) as session:
        _train(session, train, run_index, 5)
    writer.close()
    assert _scalars(_events(tmp_path), "run_index") == [(1, 0.0)]  # then not for an hour
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1, summary_op=summary,
                                  scaffold=tf.train.Scaffold())


class _FakeSession:
    """A session whose global step is `step`; fetching it in a run may give the value before
    this run's increment (stale) or after it (fresh)."""

    def __init__(self):
        self.step = 0

    def run(self, fetches):
        return self.step


class _FakeContext:
    def __init__(self, session):
        self.session = session


class _RecordingWriter:
    def __init__(self):
        self.steps = []

    def add_summary(self, summary, step):
        self.steps.append(step)

    def add_session_log(self, log, step):
        pass

    def flush(self):
        pass


@pytest.mark.parametrize("stale", [True, False])
def test_summary_steps_do_not_depend_on_when_the_global_step_is_read(stale):
    tf.train.get_or_create_global_step()
    writer = _RecordingWriter()
    hook = tf.train.SummarySaverHook(save_steps=3, summary_writer=writer,
                                     summary_op=tf.constant(b""))
    hook.begin()
    session = _FakeSession()
    for _ in range(11):
        requested = "summary" in hook.before_run(_FakeContext(session)).fetches
        fetched = session.step if stale else session.step + 1
        session.step += 1
        results = {"global_step": fetched}
        if requested:
            results["summary"] = [b""]
        hook.after_run(_FakeContext(session), SessionRunValues(results, None, None))
    assert writer.steps == [1, 4, 7, 10]


def test_monitored_training_session_writes_summaries_into_checkpoint_dir(tmp_path):
    train, run_index, _ = _model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           save_summaries_steps=2,
                                           log_step_count_steps=4) as session:
        _train(session, train, run_index, 9)
    events = _events(tmp_path)
    kinds = [event.WhichOneof("what") for event in events]
    assert kinds[:2] == ["file_version", "graph_def"] and "session_log" in kinds
    # merge_all() of the graph's summaries, by default every 2 steps from the first.
    assert _scalars(events, "run_index") == [(1, 0.0), (3, 2.0), (5, 4.0), (7, 6.0),
                                             (9, 8.0)]
    rates = _scalars(events, "global_step/sec")
    assert len(rates) >= 1 and all(rate > 0 for _, rate in rates)
    graph_def = tf.GraphDef.FromString(events[1].graph_def)
    assert "index" in {node.name for node in graph_def.node}


def test_summary_dir_and_the_scaffold_summary_op(tmp_path):
    train, run_index, summary = _model()
    tf.summary.scalar("ignored", 1.0)
    scaffold = tf.train.Scaffold(summary_op=summary)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "ckpt"),
                                           summary_dir=str(tmp_path / "logs"),
                                           scaffold=scaffold, save_summaries_steps=4,
                                           log_step_count_steps=None) as session:
        _train(session, train, run_index, 5)
    assert not glob.glob(str(tmp_path / "ckpt" / "*tfevents*"))
    events = _events(tmp_path / "logs")
    assert _scalars(events, "run_index") == [(1, 0.0), (5, 4.0)]
    assert not _scalars(events, "ignored") and not _scalars(events, "global_step/sec")


def test_no_summaries_without_a_directory_or_when_turned_off(tmp_path):
    train, run_index, _ = _model()
    with tf.train.MonitoredTrainingSession(save_summaries_steps=1) as session:
        _train(session, train, run_index, 2)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           save_summaries_steps=None,
                                           save_summaries_secs=None,
                                           log_step_count_steps=None) as session:
        _train(session, train, run_index, 2)
    assert not glob.glob(str(tmp_path / "*tfevents*"))


def test_step_counter_hook_writes_global_step_per_second(tmp_path):
    train, run_index, _ = _model()
    hook = tf.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))
    with tf.train.MonitoredSession(hooks=[hook]) as session:
        _train(session, train, run_index, 7)
    tf.summary.FileWriterCache.get(str(tmp_path)).flush()  # the hook, as TF's, leaves it
    rates = _scalars(_events(tmp_path), "global_step/sec")
    steps = [step for step, _ in rates]
    assert len(steps) == len(hook.rates) >= 2 and set(np.diff(steps)) == {2}
    np.testing.assert_allclose([rate for _, rate in rates], hook.rates, rtol=1e-6)
