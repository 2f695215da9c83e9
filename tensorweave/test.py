"""`tf.test`: the TF 1.x test helpers, for users' tests of their graphs.

`TestCase` (a `unittest.TestCase`) gives each test a fresh default graph and seeds,
`session()` / `cached_session()` / `test_session()`, `evaluate`, array assertions that accept
nested structures (`assertAllClose`, `assertAllEqual`, ...), `assertRaisesOpError`, and a
per-test `get_temp_dir()`. `compute_gradient` / `compute_gradient_error` compare symbolic and
numeric Jacobians (tensorweave's own op tests use them through tensorweave/testing/). There is no
GPU: `is_gpu_available()` is False and `gpu_device_name()` is "".
"""
import contextlib
import re
import shutil
import tempfile
import unittest
from unittest import mock  # noqa: F401 - tf.test.mock

import numpy as np

import tensorweave as tf

def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                     extra_feed_dict=None):
    """(theoretical, numerical) Jacobians of y with respect to x, each of shape [x size, y size].

    `x` may be a list of tensors (with `x_shape` and `x_init_value` lists to match); the result
    is then a list of (theoretical, numerical) pairs. Values of x are fed, so x may be any tensor
    (a placeholder, a constant, an intermediate). Runs in the default session if it owns y's
    graph, otherwise in a temporary session.
    """
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    shapes = list(x_shape) if isinstance(x, (list, tuple)) else [x_shape]
    if len(shapes) != len(xs):
        raise ValueError(f"compute_gradient: {len(xs)} tensors in x but {len(shapes)} shapes")
    if x_init_value is None:
        inits = [None] * len(xs)
    else:
        inits = list(x_init_value) if isinstance(x, (list, tuple)) else [x_init_value]
    xs = [tf.convert_to_tensor(t) for t in xs]
    y = tf.convert_to_tensor(y)
    if not y.dtype.is_floating:
        raise TypeError(f"compute_gradient: y ({y.name}) must be floating point, got "
                        f"{y.dtype.name}")
    rng = np.random.default_rng(0)
    values = []
    for tensor, shape, init in zip(xs, shapes, inits):
        if not tensor.dtype.is_floating:
            raise TypeError(f"compute_gradient: x {tensor.name} must be floating point, got "
                            f"{tensor.dtype.name}")
        if init is None:
            init = rng.random(tuple(shape))
        init = np.asarray(init).astype(tensor.dtype.np_dtype)
        if init.shape != tuple(shape):
            raise ValueError(f"compute_gradient: x_init_value for {tensor.name} has shape "
                             f"{init.shape}, expected {tuple(shape)}")
        values.append(init)
    y_shape = tuple(y_shape)
    with _session_for(y.graph) as session:
        with y.graph.as_default():
            dy = tf.placeholder(y.dtype, y_shape, name="compute_gradient_dy")
            grads = tf.gradients(y, xs, grad_ys=dy)
        feeds = dict(extra_feed_dict or {})
        feeds.update(zip(xs, values))
        y_size = int(np.prod(y_shape, dtype=np.int64))
        theoretical = [np.zeros((v.size, y_size)) for v in values]
        for col in range(y_size):
            one_hot = np.zeros(y_size, dtype=y.dtype.np_dtype)
            one_hot[col] = 1
            fetch = [g for g in grads if g is not None]
            got = iter(session.run(fetch, {**feeds, dy: one_hot.reshape(y_shape)}))
            for i, grad in enumerate(grads):
                if grad is not None:
                    theoretical[i][:, col] = _dense(next(got), values[i].shape).reshape(-1)
        numerical = []
        for i, (tensor, value) in enumerate(zip(xs, values)):
            jacobian = np.zeros((value.size, y_size))
            for row in range(value.size):
                plus, minus = value.copy(), value.copy()
                plus.flat[row] += delta
                minus.flat[row] -= delta
                y_plus = session.run(y, {**feeds, tensor: plus}).astype(np.float64)
                y_minus = session.run(y, {**feeds, tensor: minus}).astype(np.float64)
                jacobian[row] = (y_plus - y_minus).reshape(-1) / (2 * delta)
            numerical.append(jacobian)
    pairs = list(zip(theoretical, numerical))
    return pairs if isinstance(x, (list, tuple)) else pairs[0]


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict)
    pairs = result if isinstance(result, list) else [result]
    error = 0.0
    for theoretical, numerical in pairs:
        if theoretical.size:
            error = max(error, float(np.max(np.abs(theoretical - numerical))))
    return error


class _session_for:  # noqa: N801 - used as a context manager, reads as a function
    """The default session when it runs `graph`; otherwise a temporary one, closed on exit."""

    def __init__(self, graph):
        self._graph = graph
        self._owned = None

    def __enter__(self):
        session = tf.get_default_session()
        if session is not None and session.graph is self._graph:
            return session
        self._owned = tf.Session(graph=self._graph)
        return self._owned

    def __exit__(self, *exc):
        if self._owned is not None:
            self._owned.close()
        return False


def _dense(value, shape):
    """A fetched gradient as a dense array (IndexedSlices values are summed into their rows)."""
    if hasattr(value, "indices") and hasattr(value, "values"):
        dense = np.zeros(shape, dtype=np.float64)
        np.add.at(dense, np.asarray(value.indices), np.asarray(value.values))
        return dense
    return np.asarray(value, dtype=np.float64)


# --- the test case ------------------------------------------------------------------------------
def _as_array(value):
    array = np.asarray(value)
    if array.dtype == object and not all(isinstance(v, bytes) for v in array.reshape(-1)):
        raise ValueError("not an array")
    return array


def _compare(a, b, check, path="value"):
    """Calls check(array_a, array_b, path) on matching leaves; dicts by key, sequences that do
    not form one array element by element (as TF's assertAllClose)."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or set(a) != set(b):
            raise AssertionError(f"{path}: structures differ: {a!r} vs {b!r}")
        for key in a:
            _compare(a[key], b[key], check, f"{path}[{key!r}]")
        return
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        try:
            a_array, b_array = _as_array(a), _as_array(b)
        except ValueError:
            if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or \
                    len(a) != len(b):
                raise AssertionError(f"{path}: structures differ: {a!r} vs {b!r}") from None
            for index, (x, y) in enumerate(zip(a, b)):
                _compare(x, y, check, f"{path}[{index}]")
            return
        check(a_array, b_array, path)
        return
    check(np.asarray(a), np.asarray(b), path)


_TEMP_ROOT = None


def get_temp_dir():
    """A directory for this process's tests, removed at exit."""
    global _TEMP_ROOT
    if _TEMP_ROOT is None:
        _TEMP_ROOT = tempfile.mkdtemp(prefix="tensorweave-test-")
        import atexit
        atexit.register(shutil.rmtree, _TEMP_ROOT, True)
    return _TEMP_ROOT


class TestCase(unittest.TestCase):
    """Base class of tests of graphs, with TF 1.x's `tf.test.TestCase` helpers."""

    def setUp(self):
        super().setUp()
        tf.reset_default_graph()
        np.random.seed(87654321)
        tf.set_random_seed(87654321)
        self._cached_session = None
        self._temp_dir = None

    def tearDown(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None
        super().tearDown()

    def get_temp_dir(self):
        """A fresh directory for this test (under the process's test directory)."""
        if self._temp_dir is None:
            self._temp_dir = tempfile.mkdtemp(dir=get_temp_dir(),
                                              prefix=re.sub(r"\W", "_", self.id())[-60:])
        return self._temp_dir

    # --- sessions --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A session on `graph` (the default graph), installed as the default session."""
        if force_gpu:
            raise unittest.SkipTest("tensorweave has no GPU devices")
        graph = graph if graph is not None else tf.get_default_graph()
        with tf.Session(graph=graph, config=config) as sess, graph.as_default(), \
                sess.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """One session per test, reused by every call (closed in tearDown)."""
        if force_gpu:
            raise unittest.SkipTest("tensorweave has no GPU devices")
        graph = graph if graph is not None else tf.get_default_graph()
        if self._cached_session is None:
            self._cached_session = tf.Session(graph=graph, config=config)
        elif self._cached_session.graph is not graph:
            raise ValueError("cached_session(): this test's cached session runs another graph; "
                             "use session(graph=...) for a second graph")
        with graph.as_default(), self._cached_session.as_default():
            yield self._cached_session

    def test_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """The old name of cached_session(). (Its name makes unittest collect it: skip that.)"""
        if self.id().endswith(".test_session"):
            self.skipTest("test_session is not a test")
        return self.cached_session(graph, config, use_gpu, force_gpu)

    def evaluate(self, tensors):
        """Runs `tensors` (any structure) in the default session, or in the cached session."""
        sess = tf.get_default_session()
        if sess is None:
            with self.cached_session() as cached:
                return cached.run(tensors)
        return sess.run(tensors)

    # --- assertions ------------------------------------------------------------------------------
    def _value(self, x):
        if isinstance(x, (tf.Tensor, tf.Variable)):
            return self.evaluate(x)
        return x

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802 - TF's name
        def check(x, y, path):
            if x.shape != y.shape:
                raise AssertionError(f"{path}: shape mismatch {x.shape} vs {y.shape}. "
                                     f"{msg or ''}")
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{path} {msg or ''}")
        _compare(self._value(a), self._value(b), check)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, msg=None):
        x = np.asarray(self._value(a))
        y = np.asarray(self._value(b))
        if x.dtype == np.float16 or y.dtype == np.float16:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        elif x.dtype == np.float32 or y.dtype == np.float32:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        self.assertAllClose(x, y, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        self.fail(msg or "the values are all close")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        def check(x, y, path):
            if x.shape != y.shape:
                raise AssertionError(f"{path}: shape mismatch {x.shape} vs {y.shape}. "
                                     f"{msg or ''}")
            np.testing.assert_array_equal(x, y, err_msg=f"{path} {msg or ''}")
        _compare(self._value(a), self._value(b), check)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(abs(f1 - f2) <= err, f"{f1} != {f2} +/- {err}. {msg or ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        self.assertTrue(np.allclose(ndarray1, ndarray2, atol=err), msg)

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._value(a)) > comparison_target))

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._value(a)) < comparison_target))

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._value(a)) >= comparison_target))

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(np.asarray(self._value(a)) <= comparison_target))

    def assertAllInRange(self, target, lower_bound, upper_bound,  # noqa: N802
                         open_lower_bound=False, open_upper_bound=False):
        values = np.asarray(self._value(target))
        low = values > lower_bound if open_lower_bound else values >= lower_bound
        high = values < upper_bound if open_upper_bound else values <= upper_bound
        self.assertTrue(np.all(low & high), f"{values} not in range [{lower_bound}, "
                        f"{upper_bound}]")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        values = set(np.asarray(self._value(target)).reshape(-1).tolist())
        self.assertTrue(values <= set(expected_set), f"{values - set(expected_set)} not in set")

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        self.assertEqual(np.asarray(self._value(target)).dtype,
                         tf.as_dtype(expected_dtype).np_dtype)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        self.assertEqual(list(np.shape(np_array)), tf_tensor.shape.as_list(), msg)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        self.assertEqual(tf.DeviceSpec.from_string(device1 or "").to_string(),
                         tf.DeviceSpec.from_string(device2 or "").to_string(), msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(error):
                return re.search(expected_err_re_or_predicate, str(error)) is not None
        try:
            yield
        except exception_type as error:
            if not predicate(error):
                raise AssertionError(f"{type(error).__name__} raised but did not match: "
                                     f"{error}") from error
        else:
            self.fail(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(tf.errors.OpError,
                                                   expected_err_re_or_predicate)


def main(argv=None):
    """Runs the tests of the calling module (as `unittest.main`)."""
    return unittest.main(argv=argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    return False


def is_built_with_cuda():
    return False


def is_built_with_gpu_support():
    return False


def gpu_device_name():
    return ""


def assert_equal_graph_def(expected, actual):
    """Raises AssertionError unless the two GraphDefs have the same nodes (in any order)."""
    def nodes(graph_def):
        return {node.name: node.SerializeToString(deterministic=True) for node in graph_def.node}
    want, got = nodes(expected), nodes(actual)
    if want != got:
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        changed = sorted(name for name in set(want) & set(got) if want[name] != got[name])
        raise AssertionError(f"GraphDefs differ: only in expected {missing}, only in actual "
                             f"{extra}, different {changed}")


def is_built_with_xla():
    """False: no XLA backend is built in (issue 15's optional JAX backend is not here yet)."""
    return False


def is_built_with_rocm():
    return False


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None,
                         ps_config=None):
    """Starts `num_workers` worker and `num_ps` ps `tf.train.Server`s in this process, on
    free ports of 127.0.0.1; returns (workers, ps_servers). Sessions reach them through
    `workers[i].target`; stop them with `server.stop()`."""
    from tensorweave.cli.launch import free_ports
    if protocol != "grpc":
        raise ValueError(f"create_local_cluster: only the 'grpc' protocol is supported, got "
                         f"{protocol!r}")
    if num_workers < 1 or num_ps < 0:
        raise ValueError(f"create_local_cluster needs num_workers >= 1 and num_ps >= 0, got "
                         f"{num_workers} and {num_ps}")
    ports = free_ports(num_workers + num_ps)
    cluster = {"worker": [f"127.0.0.1:{port}" for port in ports[:num_workers]]}
    if num_ps:
        cluster["ps"] = [f"127.0.0.1:{port}" for port in ports[num_workers:]]
    spec = tf.train.ClusterSpec(cluster)
    workers = [tf.train.Server(spec, job_name="worker", task_index=i, protocol=protocol,
                               config=worker_config, start=True) for i in range(num_workers)]
    ps_servers = [tf.train.Server(spec, job_name="ps", task_index=i, protocol=protocol,
                                  config=ps_config, start=True) for i in range(num_ps)]
    return workers, ps_servers


class Benchmark:
    """TF 1.x's benchmark base class: `run_op_benchmark` times an op over iterations after a
    burn-in, and `report_benchmark` prints the entry (one line, "entry: {...}") and returns it."""

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        entry = {"name": name or type(self).__name__, "iters": iters, "cpu_time": cpu_time,
                 "wall_time": wall_time, "throughput": throughput, "extras": extras or {},
                 "metrics": metrics or []}
        print(f"entry: {entry}", flush=True)
        return entry

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2, min_iters=10,
                         store_trace=False, store_memory_usage=True, name=None, extras=None,
                         mbs=0):
        """Runs `op_or_tensor` burn_iters times, then min_iters timed times; reports and
        returns {"name", "iters", "wall_time" (median seconds per run), "extras"}."""
        import time
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        times = []
        for _ in range(min_iters):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            times.append(time.perf_counter() - start)
        extras = dict(extras or {})
        if mbs:
            extras["throughput_mb_per_sec"] = mbs / float(np.median(times))
        entry = self.report_benchmark(iters=min_iters, wall_time=float(np.median(times)),
                                      extras=extras, name=name)
        return {key: entry[key] for key in ("name", "iters", "wall_time", "extras")}

    def evaluate(self, tensors):
        """Runs `tensors` in the default session."""
        return tf.get_default_session().run(tensors)


from tensorweave.test_extra import (StubOutForTesting, benchmark_config,  # noqa: E402,F401
                                    disable_with_predicate, with_eager_op_as_function,
                                    is_cpu_target_available, test_src_dir_path, experimental)
