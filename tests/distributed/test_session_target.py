"""Remote session targets go through the runtime's registry (register_session_target), not
through patches of Session: a registered factory's object builds the plans, lists the
devices and is closed with the session; a registered reset implements Session.reset."""
import pytest

import tensorweave as tf
from tensorweave.runtime import session as session_lib


class _FakePlan:
    def __init__(self, remote, flat):
        self.remote = remote
        self.flat = flat

    def run(self, feed_values, runtime_factory=None, timeout=None, step_stats=None,
            register_step=None):
        self.remote.runs.append(({t.name: v for t, v in feed_values.items()}, timeout))
        return [41.0 + len(self.remote.runs) for item in self.flat
                if isinstance(item, tf.Tensor)]


class _FakeRemote:
    def __init__(self, target, graph, config):
        self.target = target
        self.runs = []
        self.plans = 0
        self.closed = False

    def build_plan(self, flat, feeds):
        self.plans += 1
        return _FakePlan(self, flat)

    def list_devices(self):
        return ["/job:fake/replica:0/task:0/device:CPU:0"]

    def close(self):
        self.closed = True


@pytest.fixture
def fake_target():
    made, resets = [], []

    def factory(target, graph, config):
        made.append(_FakeRemote(target, graph, config))
        return made[-1]

    session_lib.register_session_target("fake://", factory,
                                        lambda *args: resets.append(args))
    try:
        yield made, resets
    finally:
        session_lib._TARGET_FACTORIES.pop("fake://", None)  # noqa: SLF001
        session_lib._TARGET_RESETS.pop("fake://", None)  # noqa: SLF001


def test_a_registered_target_builds_the_plans_lists_devices_and_resets(fake_target):
    made, resets = fake_target
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [], name="x")
    y = x + 1.0
    with tf.Session("fake://somewhere:1", config=tf.ConfigProto(
            operation_timeout_in_ms=2500)) as sess:
        assert sess.run(y, {x: 3.0}) == 42.0
        assert sess.run({"a": [y]}, {x: 4.0}) == {"a": [43.0]}
        assert sess.run(y, {x: 5.0}) == 44.0
        remote = made[0]
        assert remote.plans == 1  # one signature (feeds, fetches): one plan
        assert sess.run([y, x], {x: 6.0}) == [45.0, 45.0]
        assert remote.plans == 2
        assert remote.runs[0] == ({"x:0": 3.0}, 2.5)
        assert sess.list_devices() == ["/job:fake/replica:0/task:0/device:CPU:0"]
    assert remote.closed
    tf.Session.reset("fake://somewhere:1", ["c1"])
    assert resets == [("fake://somewhere:1", ["c1"], None)]


def test_session_methods_are_the_runtimes_own_not_patched():
    import tensorweave.distributed  # noqa: F401 - registers grpc://
    base = session_lib.BaseSession
    for name in ("_build_plan", "list_devices", "run", "close"):
        function = base.__dict__[name]
        assert function.__module__ == "tensorweave.runtime.session", name
        assert function.__qualname__ == f"BaseSession.{name}", name
    assert isinstance(base.__dict__["reset"], staticmethod)
    assert "grpc://" in session_lib._TARGET_RESETS  # noqa: SLF001


def test_reset_of_a_target_without_a_remote_side_is_an_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match="remote target"):
        tf.Session.reset("")
    with pytest.raises(tf.errors.InvalidArgumentError, match="remote target"):
        tf.Session.reset("nosuch://host:1")
