"""The tf.config / tf.debugging / tf.sysconfig / tf.test / tf.experimental names of issue 14,
and tf.load_op_library's refusal, each checked against its documented graph-mode meaning."""
import json
import mmap
import os
import unittest

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def _reset_switches():
    yield
    tf.debugging.disable_check_numerics()
    tf.debugging.experimental.disable_dump_debug_info()
    tf.debugging.set_log_device_placement(False)
    tf.config.run_functions_eagerly(False)


def test_check_numerics_names_the_first_bad_op_and_can_be_turned_off():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        y = tf.sqrt(x) * 2.0
        with tf.Session() as sess:
            np.testing.assert_array_equal(np.isnan(sess.run(y, {x: [4.0, -1.0]})),
                                          [False, True])  # off: NaN flows through
        tf.debugging.enable_check_numerics()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"NaN in output 0 of op Sqrt"):
                sess.run(y, {x: [4.0, -1.0]})
            np.testing.assert_allclose(sess.run(y, {x: [4.0, 1.0]}), [4.0, 2.0])
        tf.debugging.disable_check_numerics()
        with tf.Session() as sess:
            sess.run(y, {x: [-1.0, 1.0]})


def test_dump_debug_info_writes_one_record_per_op_run(tmp_path):
    with tf.Graph().as_default():
        x = tf.constant([1.0, -2.0, 0.0], name="x")
        y = tf.div(x, tf.constant(0.0), name="ratio")
        tf.debugging.experimental.enable_dump_debug_info(str(tmp_path), "FULL_HEALTH",
                                                         op_regex="ratio")
        with tf.Session() as sess:
            sess.run(y)
        tf.debugging.experimental.disable_dump_debug_info()
    records = [json.loads(line) for line in open(os.path.join(tmp_path, "ops.jsonl"))]
    assert [r["op"] for r in records] == ["ratio"]
    health = records[0]["outputs"][0]
    assert health["shape"] == [3] and health["has_inf_or_nan"]
    assert (health["nan"], health["neg_inf"], health["pos_inf"]) == (1, 1, 1)
    with pytest.raises(ValueError, match="tensor_debug_mode"):
        tf.debugging.experimental.enable_dump_debug_info(str(tmp_path), "EVERYTHING")


def test_log_device_placement_default_reaches_new_sessions(capsys):
    tf.debugging.set_log_device_placement(True)
    assert tf.debugging.get_log_device_placement()
    with tf.Graph().as_default():
        total = tf.add(tf.constant(1.0), 2.0, name="logged_add")
        with tf.Session() as sess:
            sess.run(total)
    captured = capsys.readouterr()
    assert "Device placement of 3 ops" in captured.out + captured.err
    tf.debugging.enable_traceback_filtering()
    assert tf.debugging.is_traceback_filtering_enabled()
    tf.debugging.disable_traceback_filtering()
    assert not tf.debugging.is_traceback_filtering_enabled()


def test_run_functions_eagerly_builds_the_body_inline():
    @tf.function
    def double(x):
        return x * 2.0

    tf.config.run_functions_eagerly(True)
    assert tf.config.functions_run_eagerly() and tf.config.experimental_functions_run_eagerly()
    with tf.Graph().as_default():
        y = double(tf.constant(3.0))
        assert y.op.type == "Mul"  # no call op: the Python ran in this graph
        tf.config.run_functions_eagerly(False)
        z = double(tf.constant(3.0))
        assert z.op.type == "PartitionedCall"
        with tf.Session() as sess:
            assert sess.run([y, z]) == [6.0, 6.0]


def test_memory_info_policies_and_optimizer_options():
    info = tf.config.experimental.get_memory_info("CPU:0")
    assert 0 < info["current"] <= info["peak"]
    ballast = mmap.mmap(-1, 64 << 20)  # 64 MiB of pages touched, then handed back
    for _ in range(64):
        ballast.write(b"x" * (1 << 20))
    grown = tf.config.experimental.get_memory_info("/device:CPU:0")
    assert grown["peak"] >= info["current"] + (64 << 20) * 0.9
    ballast.close()
    # Linux batches RSS counters per thread: readings agree to within ~64 pages a thread.
    assert tf.config.experimental.get_memory_info("CPU:0")["peak"] >= grown["peak"] - (1 << 20)
    tf.config.experimental.reset_memory_stats("CPU:0")
    after = tf.config.experimental.get_memory_info("CPU:0")
    assert after["peak"] < grown["peak"] - (32 << 20)
    assert tf.config.experimental.get_memory_usage("CPU:0") > 0
    with pytest.raises(ValueError, match="CPU:0"):
        tf.config.experimental.get_memory_info("GPU:0")

    tf.config.experimental.set_device_policy("explicit")
    assert tf.config.experimental.get_device_policy() == "explicit"
    tf.config.experimental.set_device_policy(None)
    assert tf.config.experimental.get_device_policy() == "silent"
    with pytest.raises(ValueError, match="set_device_policy"):
        tf.config.experimental.set_device_policy("loud")
    tf.config.experimental.set_synchronous_execution(False)
    assert not tf.config.experimental.get_synchronous_execution()
    tf.config.experimental.set_synchronous_execution(True)
    tf.config.experimental.enable_mlir_bridge()
    tf.config.experimental.disable_mlir_bridge()

    tf.config.optimizer.set_jit(True)
    assert tf.config.optimizer.get_jit() is True
    tf.config.optimizer.set_jit(False)
    tf.config.optimizer.set_experimental_options({"constant_folding": False})
    assert tf.config.optimizer.get_experimental_options()["constant_folding"] is False
    with pytest.raises(ValueError, match="unknown options"):
        tf.config.optimizer.set_experimental_options({"constant_foldin": True})

    filters = tf.config.experimental.ClusterDeviceFilters()
    filters.set_device_filters("worker", 0, ["/job:ps"])
    assert filters.device_filters("worker", 0) == ["/job:ps"]
    with pytest.raises(ValueError, match="tf.train.Server"):
        tf.config.experimental_connect_to_cluster(None)


def test_sysconfig_names_this_package_and_custom_ops_are_refused(tmp_path):
    include = tf.sysconfig.get_include()
    assert os.path.isdir(os.path.join(include, "framework", "protos"))
    assert tf.sysconfig.get_lib() == include
    assert tf.sysconfig.get_compile_flags()[0] == f"-I{include}"
    assert tf.sysconfig.get_link_flags() == []
    assert tf.sysconfig.get_build_info()["is_cuda_build"] is False
    assert (tf.CXX11_ABI_FLAG, tf.MONOLITHIC_BUILD) == (0, 0)
    with pytest.raises(tf.errors.NotFoundError, match="missing_ops.so"):
        tf.load_op_library(str(tmp_path / "missing_ops.so"))
    library = tmp_path / "zero_out.so"
    library.write_bytes(b"\x7fELF")
    for load in (tf.load_op_library, tf.load_library, tf.load_file_system_library,
                 tf.experimental.register_filesystem_plugin):
        with pytest.raises(tf.errors.UnimplementedError, match="zero_out.so.*register_op"):
            load(str(library))


def test_tf_test_extras():
    class Target:
        value = 1

        @staticmethod
        def helper():
            return "real"

    class Child(Target):
        pass

    stubs = tf.test.StubOutForTesting()
    stubs.Set(Target, "value", 2)
    stubs.SmartSet(Child, "helper", staticmethod(lambda: "stub"))
    assert Target.value == 2 and Child.helper() == "stub"
    stubs.UnsetAll()
    assert Target.value == 1 and Child.helper() == "real" and "helper" not in Child.__dict__

    class Case(unittest.TestCase):
        @tf.test.disable_with_predicate(lambda: True, "always off")
        def test_off(self):
            raise AssertionError("must not run")

    result = unittest.TestResult()
    Case("test_off").run(result)
    assert [reason for _, reason in result.skipped] == ["always off"]
    assert tf.test.with_eager_op_as_function(Case) is Case
    assert isinstance(tf.test.benchmark_config(), tf.ConfigProto)
    assert tf.test.is_cpu_target_available("x86") != tf.test.is_cpu_target_available("aarch64")
    assert os.path.exists(tf.test.test_src_dir_path("framework/protos"))
    tf.test.experimental.sync_devices()


def test_experimental_namespace():
    assert tf.experimental.float8_e4m3fn.size == 1 and tf.experimental.int4.is_integer
    with tf.experimental.function_executor_type("SINGLE_THREADED_EXECUTOR"):
        from tensorweave.experimental_settings import current_function_executor_type
        assert current_function_executor_type() == "SINGLE_THREADED_EXECUTOR"
    assert current_function_executor_type() is None
    with tf.experimental.async_scope():
        tf.experimental.async_clear_error()
    with pytest.raises(ValueError, match="output_all_intermediates"):
        tf.experimental.output_all_intermediates("yes")
    with tf.Graph().as_default():
        x = tf.cast(tf.constant([0.3, 1.7, -448.0, 500.0]), tf.experimental.float8_e4m3fn)
        with tf.Session() as sess:
            got = sess.run(tf.cast(x, tf.float32))
    np.testing.assert_allclose(got[:3], [0.3125, 1.75, -448.0])
    assert np.isnan(got[3]) or got[3] == 448.0  # e4m3fn: no infinity


def test_v2_switches_refuse_what_they_cannot_switch():
    tf.enable_control_flow_v2()
    assert tf.control_flow_v2_enabled()
    for switch in (tf.enable_eager_execution, tf.enable_v2_behavior, tf.enable_tensor_equality,
                   tf.enable_v2_tensorshape, tf.enable_resource_variables):
        with pytest.raises(NotImplementedError, match="graph mode"):
            switch()
    assert tf.as_dtype("resource") is tf.resource and tf.resource.as_datatype_enum == 20
