"""tf.variable_scope / tf.get_variable (naming, sharing, inheritance) and the initializers."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import init_ops


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as fresh:
        yield fresh


def run_initialized(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


# --- names and sharing ---------------------------------------------------------------------------
def test_get_variable_names_follow_variable_scopes():
    top = tf.get_variable("top", [1])
    with tf.variable_scope("model"):
        with tf.variable_scope("layer"):
            kernel = tf.get_variable("kernel", [2, 3])
    assert top.name == "top:0"
    assert kernel.name == "model/layer/kernel:0"
    assert kernel.op.name == "model/layer/kernel"
    assert kernel.shape.as_list() == [2, 3] and kernel.dtype is tf.float32
    assert tf.global_variables() == [top, kernel]
    assert tf.trainable_variables() == [top, kernel]


def test_name_scopes_do_not_prefix_variables_but_prefix_ops():
    with tf.name_scope("ns"):
        with tf.variable_scope("vs") as scope:
            var = tf.get_variable("v", [1])
            total = tf.add(var, 1.0, name="total")
    assert var.name == "vs/v:0"
    assert total.name == "ns/vs/total:0"
    assert scope.original_name_scope == "ns/vs/"


def test_reuse_true_finds_the_existing_variable():
    with tf.variable_scope("shared"):
        created = tf.get_variable("w", [2])
    with tf.variable_scope("shared", reuse=True):
        found = tf.get_variable("w", [2])
        found_without_shape = tf.get_variable("w")
    assert found is created and found_without_shape is created
    assert len(tf.global_variables()) == 1


def test_reuse_variables_on_the_current_scope():
    with tf.variable_scope("s") as scope:
        first = tf.get_variable("w", [1])
        scope.reuse_variables()
        assert tf.get_variable_scope().reuse is True
        assert tf.get_variable("w", [1]) is first


def test_missing_variable_with_reuse_true_raises():
    with tf.variable_scope("s", reuse=True):
        with pytest.raises(ValueError, match="s/absent does not exist"):
            tf.get_variable("absent", [1])


def test_duplicate_without_reuse_raises_tf_message():
    with tf.variable_scope("s"):
        tf.get_variable("w", [1])
    with tf.variable_scope("s"):
        with pytest.raises(ValueError) as info:
            tf.get_variable("w", [1])
    assert "Variable s/w already exists, disallowed. Did you mean to set reuse=True or " \
        "reuse=tf.AUTO_REUSE in VarScope?" in str(info.value)


def test_sharing_checks_shape_and_dtype():
    with tf.variable_scope("s"):
        tf.get_variable("w", [2, 3])
    with tf.variable_scope("s", reuse=True):
        with pytest.raises(ValueError, match="shape"):
            tf.get_variable("w", [3, 2])
        with pytest.raises(ValueError, match="dtype"):
            tf.get_variable("w", [2, 3], dtype=tf.float64)
        assert tf.get_variable("w", [None, 3]).name == "s/w:0"


def test_auto_reuse_creates_then_reuses():
    def layer():
        with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
            return tf.get_variable("w", [1])

    assert layer() is layer()
    assert len(tf.global_variables()) == 1
    with tf.variable_scope("outer", reuse=tf.AUTO_REUSE):
        with tf.variable_scope("inner"):
            assert tf.get_variable_scope().reuse is tf.AUTO_REUSE
            first = tf.get_variable("v", [1])
            assert tf.get_variable("v", [1]) is first


def test_nested_scopes_inherit_reuse_and_false_does_not_turn_it_off():
    with tf.variable_scope("a"):
        with tf.variable_scope("b"):
            original = tf.get_variable("w", [1])
    with tf.variable_scope("a", reuse=True):
        with tf.variable_scope("b"):
            assert tf.get_variable_scope().reuse is True
            assert tf.get_variable("w", [1]) is original
        with tf.variable_scope("b", reuse=False):
            assert tf.get_variable_scope().reuse is True
    assert tf.get_variable_scope().reuse is False


def test_reentering_a_scope_object():
    with tf.variable_scope("tower") as tower:
        original = tf.get_variable("w", [1])
        assert tower.original_name_scope == "tower/"
    with tf.variable_scope(tower, reuse=True) as again:
        assert again.name == "tower"
        assert tf.get_variable("w", [1]) is original
        # Variables continue the scope; ops get a fresh name scope, as in TF 1.x.
        assert tf.constant(0.0, name="c").op.name == "tower_1/c"
        assert again.original_name_scope == "tower/"
    with tf.variable_scope("elsewhere"):
        with tf.variable_scope(tower):
            assert tf.get_variable("new", [1]).name == "tower/new:0"
            with tf.name_scope("inner") as inner:
                assert inner == "elsewhere/tower/inner/"
    with tf.variable_scope(tower):
        with pytest.raises(ValueError, match="already exists"):
            tf.get_variable("w", [1])


def test_default_name_uniquification():
    names = []
    for _ in range(3):
        with tf.variable_scope(None, default_name="dense") as scope:
            names.append(scope.name)
            tf.get_variable("kernel", [1])
    assert names == ["dense", "dense_1", "dense_2"]
    with tf.variable_scope("conv"):
        pass
    with tf.variable_scope(None, default_name="conv") as scope:
        assert scope.name == "conv_1"
    with tf.variable_scope(None, default_name="dense", reuse=None) as scope:
        assert scope.name == "dense_3"
    with pytest.raises(ValueError):
        with tf.variable_scope(None, default_name="dense", reuse=True):
            pass
    with pytest.raises(TypeError):
        with tf.variable_scope(None):
            pass


def test_default_names_restart_when_the_parent_is_reentered():
    """A model function building default-named layers can be called again under reuse."""
    def model():
        kernels = []
        for _ in range(2):
            with tf.variable_scope(None, default_name="dense"):
                kernels.append(tf.get_variable("kernel", [1]))
        return kernels

    with tf.variable_scope("net"):
        built = model()
    with tf.variable_scope("net", reuse=True):
        reused = model()
    assert [v.name for v in built] == ["net/dense/kernel:0", "net/dense_1/kernel:0"]
    assert reused[0] is built[0] and reused[1] is built[1]


def test_ops_inside_variable_scopes_get_the_name_scope_prefix():
    with tf.variable_scope("block"):
        x = tf.constant(1.0, name="x")
        var = tf.get_variable("w", [1], initializer=tf.ones_initializer())
        y = tf.multiply(x, var, name="y")
    with tf.variable_scope("block", reuse=True):
        z = tf.constant(2.0, name="x")
    assert x.name == "block/x:0" and y.name == "block/y:0"
    assert z.name == "block_1/x:0"
    assert var.initializer.name == "block/w/Assign"


def test_get_local_variable_goes_to_local_collection():
    local = tf.get_local_variable("counter", [], dtype=tf.int32)
    assert tf.local_variables() == [local]
    assert local not in tf.global_variables() and local not in tf.trainable_variables()


def test_trainable_false_and_custom_collections():
    frozen = tf.get_variable("frozen", [1], trainable=False)
    tagged = tf.get_variable("tagged", [1], collections=["mine", tf.GraphKeys.GLOBAL_VARIABLES])
    assert frozen not in tf.trainable_variables() and frozen in tf.global_variables()
    assert tf.get_collection("mine") == [tagged]


def test_scope_variable_listing():
    with tf.variable_scope("a") as scope_a:
        inside = tf.get_variable("w", [1])
    tf.get_variable("b", [1])
    assert scope_a.global_variables() == [inside]
    assert scope_a.trainable_variables() == [inside]


def test_custom_getter_wraps_creation():
    seen = []

    def getter(base_getter, name, **kwargs):
        seen.append(name)
        kwargs["trainable"] = False
        return base_getter(name, **kwargs)

    with tf.variable_scope("g", custom_getter=getter):
        var = tf.get_variable("w", [1])
    assert seen == ["g/w"] and var not in tf.trainable_variables()


# --- initializers from the scope and of get_variable ---------------------------------------------
def test_initializer_is_inherited_from_the_scope_and_overridable():
    with tf.variable_scope("s", initializer=tf.constant_initializer(3.0)):
        inherited = tf.get_variable("inherited", [2])
        with tf.variable_scope("nested"):
            nested = tf.get_variable("nested", [2])
        overridden = tf.get_variable("overridden", [2], initializer=tf.zeros_initializer())
    values = run_initialized(inherited, nested, overridden)
    np.testing.assert_array_equal(values[0], [3.0, 3.0])
    np.testing.assert_array_equal(values[1], [3.0, 3.0])
    np.testing.assert_array_equal(values[2], [0.0, 0.0])


def test_dtype_is_inherited_from_the_scope():
    with tf.variable_scope("s", dtype=tf.float64):
        var = tf.get_variable("w", [1])
    assert var.dtype is tf.float64


def test_default_initializer_is_glorot_uniform_for_floats():
    var = tf.get_variable("w", [200, 300])
    (value,) = run_initialized(var)
    limit = np.sqrt(6.0 / (200 + 300))
    assert value.dtype == np.float32
    assert np.abs(value).max() <= limit
    assert np.abs(value).max() > 0.95 * limit
    assert abs(value.mean()) < 0.02 * limit
    np.testing.assert_allclose(value.std(), limit / np.sqrt(3), rtol=0.03)


def test_default_initializer_is_zeros_for_integers_and_bools():
    counts = tf.get_variable("counts", [3], dtype=tf.int64)
    flags = tf.get_variable("flags", [2], dtype=tf.bool)
    values = run_initialized(counts, flags)
    np.testing.assert_array_equal(values[0], [0, 0, 0])
    assert values[0].dtype == np.int64
    np.testing.assert_array_equal(values[1], [False, False])
    with pytest.raises(ValueError, match="initializer"):
        tf.get_variable("text", [1], dtype=tf.string)


def test_initializer_as_tensor_numpy_value_and_class():
    from_tensor = tf.get_variable("from_tensor", initializer=tf.constant([[1, 2]]))
    from_numpy = tf.get_variable("from_numpy", initializer=np.array([1.5, 2.5]))
    from_list = tf.get_variable("from_list", initializer=[1.0, 2.0])
    from_class = tf.get_variable("from_class", [2], initializer=tf.ones_initializer)
    assert from_tensor.dtype is tf.int32 and from_tensor.shape.as_list() == [1, 2]
    assert from_numpy.dtype is tf.float64
    assert from_list.dtype is tf.float32
    values = run_initialized(from_tensor, from_numpy, from_list, from_class)
    np.testing.assert_array_equal(values[0], [[1, 2]])
    np.testing.assert_array_equal(values[1], [1.5, 2.5])
    np.testing.assert_array_equal(values[2], [1.0, 2.0])
    np.testing.assert_array_equal(values[3], [1.0, 1.0])


def test_value_initializer_conflicts():
    with pytest.raises(ValueError, match="don't match"):
        tf.get_variable("a", initializer=np.zeros(2, np.float64), dtype=tf.float32)
    with pytest.raises(ValueError, match="shape"):
        tf.get_variable("b", [2], initializer=tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="fully defined"):
        tf.get_variable("c", [None, 2])
    with pytest.raises(ValueError, match="fully defined"):
        tf.get_variable("d")


def test_initializer_function_receives_shape_and_dtype():
    calls = []

    def initializer(shape, dtype=None, partition_info=None):
        calls.append((list(shape), dtype))
        return tf.fill(shape, tf.constant(7, dtype=dtype))

    var = tf.get_variable("w", [2, 2], dtype=tf.int32, initializer=initializer)
    assert calls == [([2, 2], tf.int32)]
    (value,) = run_initialized(var)
    np.testing.assert_array_equal(value, np.full((2, 2), 7))


def test_initializer_ops_are_named_under_the_variable():
    var = tf.get_variable("w", [2], initializer=tf.random_uniform_initializer())
    assert var.initial_value.op.name.startswith("w/Initializer/")


def test_regularizer_adds_to_regularization_losses():
    def l2(var):
        return tf.reduce_sum(var * var)

    with tf.variable_scope("s", regularizer=l2):
        inherited = tf.get_variable("w", initializer=[1.0, 2.0])
    direct = tf.get_variable("u", initializer=[3.0], regularizer=l2)
    tf.get_variable("none", [1])
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    assert losses[0].op.name.startswith("s/w/Regularizer/")
    values = run_initialized(*losses)
    assert values == [5.0, 9.0]
    with tf.variable_scope("s", reuse=True):
        assert tf.get_variable("w") is inherited
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 2
    del direct


# --- the initializers themselves -----------------------------------------------------------------
def sample(initializer, shape, dtype=tf.float32):
    tensor = initializer(shape, dtype=dtype)
    with tf.Session() as sess:
        return sess.run(tensor)


def test_zeros_ones_constant():
    zeros = sample(tf.zeros_initializer(), [2, 3])
    assert zeros.shape == (2, 3) and zeros.dtype == np.float32 and not zeros.any()
    ones = sample(tf.ones_initializer(), [4], tf.int32)
    assert ones.dtype == np.int32 and (ones == 1).all()
    filled = sample(tf.constant_initializer(2.5), [2, 2], tf.float64)
    assert filled.dtype == np.float64 and (filled == 2.5).all()
    listed = sample(tf.constant_initializer([1, 2, 3, 4]), [2, 2])
    np.testing.assert_array_equal(listed, [[1, 2], [3, 4]])
    # TF 1.x: a shorter list fills the rest with its last value.
    padded = sample(tf.constant_initializer([1, 2]), [2, 2])
    np.testing.assert_array_equal(padded, [[1, 2], [2, 2]])
    with pytest.raises((TypeError, ValueError)):
        tf.constant_initializer([1, 2, 3], verify_shape=True)([2, 2])
    with pytest.raises(ValueError):
        tf.constant_initializer([1, 2, 3, 4, 5])([2, 2])


def test_initializer_default_dtype_comes_from_the_constructor():
    assert tf.zeros_initializer(dtype=tf.int64)([2]).dtype is tf.int64
    assert tf.zeros_initializer()([2]).dtype is tf.float32


LARGE = [400, 500]


def test_random_uniform_bounds_and_statistics():
    value = sample(tf.random_uniform_initializer(-2.0, 3.0, seed=1), LARGE)
    assert value.shape == tuple(LARGE) and value.dtype == np.float32
    assert value.min() >= -2.0 and value.max() < 3.0
    assert abs(value.mean() - 0.5) < 0.02
    assert abs(value.std() - 5 / np.sqrt(12)) < 0.02
    ints = sample(tf.random_uniform_initializer(0, 10, seed=1), [1000], tf.int32)
    assert ints.dtype == np.int32 and ints.min() >= 0 and ints.max() < 10
    assert set(np.unique(ints)) == set(range(10))


def test_random_normal_statistics():
    value = sample(tf.random_normal_initializer(mean=1.0, stddev=2.0, seed=1), LARGE,
                   tf.float64)
    assert value.dtype == np.float64
    assert abs(value.mean() - 1.0) < 0.02
    assert abs(value.std() - 2.0) < 0.02
    assert np.abs(value - 1.0).max() > 6.0  # genuinely untruncated tails


def test_truncated_normal_bounds_and_statistics():
    value = sample(tf.truncated_normal_initializer(mean=-1.0, stddev=0.5, seed=1), LARGE)
    assert value.min() >= -2.0 and value.max() <= 0.0
    assert abs(value.mean() + 1.0) < 0.01
    # A unit normal truncated to [-2, 2] has standard deviation 0.8796.
    assert abs(value.std() - 0.5 * 0.87962566) < 0.01


@pytest.mark.parametrize("mode,n", [("fan_in", 200), ("fan_out", 500), ("fan_avg", 350)])
def test_variance_scaling_modes(mode, n):
    uniform = sample(tf.variance_scaling_initializer(2.0, mode, "uniform", seed=3), [200, 500])
    limit = np.sqrt(3 * 2.0 / n)
    assert np.abs(uniform).max() <= limit
    assert abs(uniform.var() - 2.0 / n) < 0.03 * 2.0 / n
    normal = sample(tf.variance_scaling_initializer(2.0, mode, "truncated_normal", seed=3),
                    [200, 500])
    assert abs(normal.var() - 2.0 / n) < 0.03 * 2.0 / n
    assert np.abs(normal).max() <= 2 * np.sqrt(2.0 / n) / 0.87962566 + 1e-6
    untruncated = sample(tf.variance_scaling_initializer(2.0, mode, "untruncated_normal",
                                                         seed=3), [200, 500])
    assert abs(untruncated.var() - 2.0 / n) < 0.03 * 2.0 / n


def test_variance_scaling_uses_receptive_field_for_convolutions():
    # 5x5 kernel, 16 -> 32 channels: fan_in = 25 * 16 = 400.
    value = sample(tf.variance_scaling_initializer(1.0, "fan_in", "uniform", seed=0),
                   [5, 5, 16, 32])
    assert value.shape == (5, 5, 16, 32)
    assert abs(value.var() - 1 / 400) < 0.05 / 400
    assert np.abs(value).max() <= np.sqrt(3 / 400)


def test_variance_scaling_rejects_bad_arguments():
    with pytest.raises(ValueError):
        tf.variance_scaling_initializer(scale=0)
    with pytest.raises(ValueError):
        tf.variance_scaling_initializer(mode="fan_sideways")
    with pytest.raises(ValueError):
        tf.variance_scaling_initializer(distribution="cauchy")


def test_glorot_and_he_initializers():
    fan_in, fan_out = 300, 100
    glorot_u = sample(tf.glorot_uniform_initializer(seed=1), [fan_in, fan_out])
    limit = np.sqrt(6 / (fan_in + fan_out))
    assert np.abs(glorot_u).max() <= limit and np.abs(glorot_u).max() > 0.99 * limit
    glorot_n = sample(tf.glorot_normal_initializer(seed=1), [fan_in, fan_out])
    assert abs(glorot_n.std() - np.sqrt(2 / (fan_in + fan_out))) < 0.02 * np.sqrt(
        2 / (fan_in + fan_out))
    he_n = sample(init_ops.he_normal(seed=1), [fan_in, fan_out])
    assert abs(he_n.std() - np.sqrt(2 / fan_in)) < 0.02 * np.sqrt(2 / fan_in)
    he_u = sample(init_ops.he_uniform(seed=1), [fan_in, fan_out])
    assert np.abs(he_u).max() <= np.sqrt(6 / fan_in)
    assert abs(he_u.std() - np.sqrt(2 / fan_in)) < 0.02 * np.sqrt(2 / fan_in)
    lecun = sample(init_ops.lecun_uniform(seed=1), [fan_in, fan_out])
    assert np.abs(lecun).max() <= np.sqrt(3 / fan_in)
    lecun_n = sample(init_ops.lecun_normal(seed=1), [fan_in, fan_out])
    assert abs(lecun_n.std() - np.sqrt(1 / fan_in)) < 0.02 * np.sqrt(1 / fan_in)


@pytest.mark.parametrize("make", [
    lambda: tf.random_uniform_initializer(seed=5),
    lambda: tf.random_normal_initializer(seed=5),
    lambda: tf.truncated_normal_initializer(seed=5),
    lambda: tf.glorot_uniform_initializer(seed=5),
    lambda: init_ops.he_normal(seed=5),
])
def test_seeded_initializers_are_deterministic_across_graphs_and_sessions(make):
    results = []
    for _ in range(2):
        with tf.Graph().as_default():
            tensor = make()([30, 40])
            with tf.Session() as sess:
                results.append(sess.run(tensor))
    np.testing.assert_array_equal(results[0], results[1])
    with tf.Graph().as_default():
        other_seed = make()
        other_seed.seed = 6
        with tf.Session() as sess:
            assert not np.array_equal(sess.run(other_seed([30, 40])), results[0])


def test_graph_seed_makes_unseeded_initializers_deterministic():
    results = []
    for _ in range(2):
        with tf.Graph().as_default():
            tf.set_random_seed(0)
            tensors = [tf.glorot_uniform_initializer()([10, 10]),
                       tf.random_normal_initializer(seed=0)([10])]
            with tf.Session() as sess:
                results.append(sess.run(tensors))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("initializer", [
    tf.zeros_initializer(dtype=tf.int32),
    tf.constant_initializer([1.0, 2.0]),
    tf.random_uniform_initializer(-1.0, 2.0, seed=3),
    tf.random_normal_initializer(1.0, 0.5, seed=3),
    tf.truncated_normal_initializer(0.0, 2.0, seed=3),
    tf.variance_scaling_initializer(2.0, "fan_out", "uniform", seed=3),
    tf.glorot_normal_initializer(seed=3, dtype=tf.float64),
], ids=lambda init: type(init).__name__)
def test_get_config_round_trip(initializer):
    config = initializer.get_config()
    assert isinstance(config["dtype"], str)
    clone = type(initializer).from_config(config)
    assert clone.get_config() == config
    first, second = initializer([3, 4]), clone([3, 4])
    assert first.dtype == second.dtype
    with tf.Session() as sess:
        np.testing.assert_array_equal(*sess.run([first, second]))


def test_float16_initializers():
    value = sample(tf.random_normal_initializer(seed=1), [1000], tf.float16)
    assert value.dtype == np.float16 and abs(float(value.std()) - 1.0) < 0.1


def test_container_scope_names_the_resources_reset_clears():
    """Variables made under tf.container live in that container: Session.reset(target,
    [name]) clears them and leaves the others."""
    server = tf.train.Server.create_local_server()
    try:
        _container_check(server)
    finally:
        server.stop()
    with pytest.raises(TypeError, match="container name must be a string"):
        with tf.container(3):
            pass


def _container_check(server):
    with tf.Graph().as_default():
        with tf.container("experiment"):
            inside = tf.Variable(1.0, name="inside")
            with tf.container(""):
                outside_again = tf.Variable(3.0, name="outside_again")
        outside = tf.Variable(2.0, name="outside")
        assert inside.op.get_attr("container") == "experiment"
        assert outside.op.get_attr("container") == outside_again.op.get_attr("container") == ""
        with tf.Session(server.target) as session:
            session.run(tf.global_variables_initializer())
        tf.Session.reset(server.target, ["experiment"])
        with tf.Session(server.target) as session:
            assert session.run([outside, outside_again]) == [2.0, 3.0]
            with pytest.raises(tf.errors.FailedPreconditionError, match="inside"):
                session.run(inside)
