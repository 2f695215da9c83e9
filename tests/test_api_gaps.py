"""The last TF 1.x names outside the op families: the TypeSpecs and type_spec_from_value,
tf.nn.static_state_saving_rnn against a NumPy RNN over two segments, tf.train.CheckpointOptions,
SavedModel's MethodNameUpdater, tf.summary.get_summary_description, tf.io.gfile's schemes and
tf.types.experimental."""
import os

import numpy as np
import pytest

import tensorweave as tf


def test_type_specs_of_values():
    assert tf.type_spec_from_value(tf.zeros([2, 3], tf.int64)) == tf.TensorSpec([2, 3],
                                                                                  tf.int64)
    assert tf.type_spec_from_value([1.0, 2.0]) == tf.TensorSpec([2], tf.float32)
    assert tf.type_spec_from_value(np.zeros([4], np.float64)) == tf.TensorSpec([4], tf.float64)
    assert tf.type_spec_from_value(b"x") == tf.TensorSpec([], tf.string)
    assert tf.type_spec_from_value(None) == tf.NoneTensorSpec()
    slices = tf.IndexedSlices(tf.zeros([5, 3]), tf.constant([0, 2, 4], tf.int64),
                              tf.constant([9, 3], tf.int64))
    spec = tf.type_spec_from_value(slices)
    assert spec == tf.IndexedSlicesSpec([None, 3], tf.float32, tf.int64, tf.int64, [3])
    assert spec.is_compatible_with(tf.IndexedSlicesSpec([None, 3], tf.float32, tf.int64,
                                                        tf.int64))
    assert not spec.is_compatible_with(tf.IndexedSlicesSpec([None, 4], tf.float32, tf.int64,
                                                            tf.int64))
    sparse = tf.SparseTensor([[0, 1]], [1.0], [2, 3])
    assert tf.type_spec_from_value(sparse) == tf.SparseTensorSpec([2, 3], tf.float32)
    dataset = tf.data.Dataset.from_tensor_slices(np.zeros([4, 2], np.float32))
    assert tf.type_spec_from_value(dataset).element_spec == tf.TensorSpec([2], tf.float32)
    for spec_class in (tf.TensorSpec, tf.IndexedSlicesSpec, tf.NoneTensorSpec, tf.OptionalSpec,
                       tf.TensorArraySpec, tf.SparseTensorSpec):
        assert issubclass(spec_class, tf.TypeSpec)
    with pytest.raises(TypeError, match="could not build a TypeSpec"):
        tf.type_spec_from_value(object())


class VariableStateSaver:
    """A state saver keeping each named state in a variable (as a queue-backed saver keeps
    it between segments of a sequence)."""

    def __init__(self, sizes, batch):
        self.vars = {name: tf.Variable(tf.zeros([batch, size]), name=name)
                     for name, size in sizes.items()}

    def state(self, name):
        return self.vars[name].value()

    def save_state(self, name, value):
        return tf.assign(self.vars[name], value)


def test_static_state_saving_rnn_carries_state_across_segments():
    rng = np.random.default_rng(2)
    data = rng.standard_normal((6, 2, 3)).astype(np.float32)  # two segments of 3 steps
    cell = tf.nn.rnn_cell.LSTMCell(4)
    saver = VariableStateSaver({"c": 4, "h": 4}, batch=2)
    segment = tf.placeholder(tf.float32, [3, 2, 3])
    outputs, state = tf.nn.static_state_saving_rnn(cell, tf.unstack(segment), saver,
                                                   ("c", "h"), scope="rnn")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = [sess.run(outputs[-1], {segment: data[:3]}),
               sess.run(outputs[-1], {segment: data[3:]})]
        kernel, bias = sess.run([v for v in tf.global_variables() if "rnn/" in v.op.name])
    c, h = np.zeros((2, 4)), np.zeros((2, 4))
    want = []
    for t in range(6):
        i, j, f, o = np.split(np.concatenate([data[t], h], 1) @ kernel + bias, 4, axis=1)
        c = c / (1 + np.exp(-(f + 1.0))) + np.tanh(j) / (1 + np.exp(-i))
        h = np.tanh(c) / (1 + np.exp(-o))
        if t in (2, 5):
            want.append(h)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="structure of cell.state_size"):
        tf.nn.static_state_saving_rnn(cell, tf.unstack(segment), saver, "c", scope="rnn2")


def test_checkpoint_options_skip_slots_and_call_back(tmp_path):
    w = tf.Variable([1.0, 2.0])
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.minimize(tf.reduce_sum(w * w))
    written = []
    checkpoint = tf.train.Checkpoint(w=w, optimizer=opt)
    options = tf.train.CheckpointOptions(experimental_skip_slot_variables=True,
                                         experimental_write_callbacks=[written.append])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        path = checkpoint.save(str(tmp_path / "ckpt"), sess, options=options)
        full = checkpoint.save(str(tmp_path / "full"), sess)
    assert written == [path]
    names = [name for name, _ in tf.train.list_variables(path)]
    assert not [n for n in names if ".OPTIMIZER_SLOT" in n] and "w/.ATTRIBUTES/VARIABLE_VALUE" \
        in names
    assert [n for n, _ in tf.train.list_variables(full) if ".OPTIMIZER_SLOT" in n]
    with pytest.raises(ValueError, match="experimental_sharding_callback"):
        tf.train.CheckpointOptions(experimental_sharding_callback="by task")


def _export(export_dir):
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.identity(x * 2.0, name="y")
        builder = tf.saved_model.Builder(export_dir)
        signature = tf.saved_model.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(sess, ["serve"], {"predict": signature})
        builder.add_meta_graph(["other"], {"predict": signature})
        builder.save()


def test_method_name_updater(tmp_path):
    export_dir = str(tmp_path / "model")
    _export(export_dir)
    updater = tf.saved_model.signature_def_utils.MethodNameUpdater(export_dir)
    updater.replace_method_name("predict", "tensorflow/serving/classify", tags="serve")
    with pytest.raises(ValueError, match="no MetaGraphDef with tags"):
        updater.replace_method_name("predict", "x", tags=["missing"])
    with pytest.raises(ValueError, match="has no signature_def 'nope'"):
        updater.replace_method_name("nope", "x", tags=["serve"])
    updater.save(str(tmp_path / "renamed"))
    assert os.listdir(tmp_path / "renamed") == ["saved_model.pb"]
    from tensorweave.train.saved_model.loader import read_saved_model
    metas = {tuple(m.meta_info_def.tags): m for m in
             read_saved_model(str(tmp_path / "renamed")).meta_graphs}
    assert metas[("serve",)].signature_def["predict"].method_name == \
        "tensorflow/serving/classify"
    assert metas[("other",)].signature_def["predict"].method_name == \
        "tensorflow/serving/predict"
    original = read_saved_model(export_dir).meta_graphs[0]
    assert original.signature_def["predict"].method_name == "tensorflow/serving/predict"


def test_summary_description_gfile_schemes_and_types():
    node = tf.NodeDef(op="TensorSummary")
    node.attr["description"].s = b'{"typeHint": "image"}'
    assert tf.summary.get_summary_description(node).type_hint == "image"
    with pytest.raises(ValueError, match="only a TensorSummary"):
        tf.summary.get_summary_description(tf.NodeDef(op="ScalarSummary"))
    schemes = tf.io.gfile.get_registered_schemes()
    assert set(schemes) == {"", "file"}
    with pytest.raises(tf.errors.UnimplementedError, match="gs"):
        tf.io.gfile.exists("gs://bucket/x")

    def fn(x: tf.TensorSpec([2], tf.float32), y=3):
        return x

    signature = tf.types.experimental.FunctionType.from_callable(fn)
    assert list(signature.parameters) == ["x", "y"]
    assert signature.flat_inputs()[0] == tf.TensorSpec([2], tf.float32)
    assert tf.Tensor in tf.types.experimental.TensorLike.__args__


class _Model:
    def __init__(self, vocab_path):
        with tf.device("/cpu:0"):
            self.w = tf.Variable([[1.0], [2.0]], name="w")
        self.vocab = tf.saved_model.Asset(vocab_path)

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def predict(self, x):
        return {"y": tf.matmul(x, self.w) + 1.0}


def test_saved_model_save_and_load_v2(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    model = _Model(str(vocab))
    export = str(tmp_path / "model")
    with tf.Session() as sess, sess.as_default():
        sess.run(tf.global_variables_initializer())
        tf.saved_model.save(model, export)
        sess.run(tf.assign(model.w, [[9.0], [9.0]]))   # after the save: not in the model
        tf.saved_model.save(model, str(tmp_path / "keep"), signatures={"mine": model.predict},
                            options=tf.saved_model.SaveOptions(
                                experimental_variable_policy=tf.saved_model.experimental
                                .VariablePolicy.SAVE_VARIABLE_DEVICES))
    assert (tmp_path / "model" / "assets" / "vocab.txt").read_text() == "a\nb\n"
    from tensorweave.train.saved_model.loader import read_saved_model
    cleared = read_saved_model(export).meta_graphs[0]
    kept = read_saved_model(str(tmp_path / "keep")).meta_graphs[0]
    assert not [n.device for n in cleared.graph_def.node if n.device]
    assert [n.device for n in kept.graph_def.node if n.name == "w"] == ["/device:CPU:0"]
    x = np.array([[1.0, 1.0], [0.0, 3.0]], np.float32)
    with tf.Graph().as_default(), tf.Session() as sess, sess.as_default():
        loaded = tf.saved_model.load_v2(export)
        signature = loaded.signatures["serving_default"]
        first = signature(x=tf.constant(x))
        second = signature(x=tf.constant(x * 2))
        again = tf.saved_model.load_v2(str(tmp_path / "keep"), tags=["serve"])
        third = again.signatures["mine"](x=x)
        got = sess.run([first, second, third])
        with pytest.raises(TypeError, match="expected the inputs"):
            signature(y=x)
    w = np.array([[1.0], [2.0]])
    np.testing.assert_allclose(got[0]["y"], x @ w + 1)
    np.testing.assert_allclose(got[1]["y"], 2 * x @ w + 1)
    np.testing.assert_allclose(got[2]["y"], x @ np.full((2, 1), 9.0) + 1)


def test_saved_model_save_needs_a_session_and_a_signature(tmp_path):
    model = _Model(__file__)
    with pytest.raises(ValueError, match="default session"):
        tf.saved_model.save(model, str(tmp_path / "a"))
    with tf.Session() as sess, sess.as_default():
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="input_signature"):
            tf.saved_model.save(model, str(tmp_path / "b"),
                                signatures=tf.function(lambda x: x))
    with pytest.raises(ValueError, match="unknown policy"):
        tf.saved_model.SaveOptions(experimental_variable_policy="everything")


class _Counter(tf.train.experimental.PythonState):
    def __init__(self):
        self.count = 0

    def serialize(self):
        return str(self.count)

    def deserialize(self, string_value):
        self.count = int(string_value)


def test_python_state_is_saved_and_restored(tmp_path):
    counter, w = _Counter(), tf.Variable(1.0)
    checkpoint = tf.train.Checkpoint(counter=counter, w=w)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        counter.count = 7
        first = checkpoint.save(str(tmp_path / "ckpt"), sess)
        counter.count = 8
        second = checkpoint.save(str(tmp_path / "ckpt"), sess)
        checkpoint.restore(first).run_restore_ops(sess)
        assert counter.count == 7
    assert ("counter/.ATTRIBUTES/py_state", []) in tf.train.list_variables(second)
    with tf.Graph().as_default(), tf.Session() as sess:   # a new program restores it
        fresh = _Counter()
        tf.train.Checkpoint(counter=fresh, w=tf.Variable(0.0)).restore(second) \
            .run_restore_ops(sess)
        assert fresh.count == 8


def test_name_attr_list_round_trips():
    value = tf.NameAttrList(name="my_function")
    value.attr["T"].type = tf.float32.as_datatype_enum
    value.attr["N"].i = 3
    back = tf.NameAttrList.FromString(value.SerializeToString())
    assert back.name == "my_function" and back.attr["N"].i == 3
    assert back.attr["T"].type == tf.float32.as_datatype_enum


_DEBUG_SCRIPT = """
import threading, sys
import tensorweave as tf
if sys.argv[1] == "debug":
    tf.data.experimental.enable_debug_mode()
calls = []
def record(v):
    calls.append(threading.current_thread().name)
    return v
dataset = tf.data.Dataset.range(40).map(lambda x: tf.py_func(record, [x], tf.int64),
                                        num_parallel_calls=4, deterministic=False).prefetch(8)
element = dataset.make_one_shot_iterator().get_next()
with tf.Session() as sess:
    values = [int(sess.run(element)) for _ in range(3)]
    ahead = len(calls)
    values += [int(sess.run(element)) for _ in range(37)]
pool = sum(name.startswith("tensorweave-data") for name in calls)
print(values == list(range(40)), ahead, pool)
"""


@pytest.mark.timeout(60)
def test_data_debug_mode_runs_pipelines_sequentially():
    import subprocess
    import sys
    results = {}
    for mode in ("normal", "debug"):
        done = subprocess.run([sys.executable, "-c", _DEBUG_SCRIPT, mode], capture_output=True,
                              text=True, timeout=50)
        assert done.returncode == 0, done.stderr
        results[mode] = done.stdout.split()
    in_order, ahead, pool = results["debug"]
    assert in_order == "True" and ahead == "3" and pool == "0"   # one call per element asked
    assert int(results["normal"][2]) > 0                          # the map's thread pool


def test_sdca_shrink_l1():
    values = [np.array([0.5, -0.05, -2.0, 0.1], np.float32), np.array([[0.3, -0.3]], np.float32)]
    weights = [tf.Variable(v) for v in values]
    shrink = tf.train.sdca_shrink_l1(weights, l1=0.2, l2=2.0)   # shrinkage 0.1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(shrink)
        got = sess.run(weights)
    for value, result in zip(values, got):
        np.testing.assert_allclose(result, np.sign(value) * np.maximum(np.abs(value) - 0.1, 0),
                                   atol=1e-7)
    with pytest.raises(ValueError, match="l2 must be a positive"):
        tf.train.sdca_shrink_l1(weights, 0.1, 0.0)



class _EveryTensorAlone(tf.train.experimental.ShardingCallback):
    description = "one shard per tensor"

    def __call__(self, shardable_tensors):
        assert all(isinstance(t, tf.train.experimental.ShardableTensor)
                   for t in shardable_tensors)
        return [{t.checkpoint_key: {t.slice_spec: t.tensor}} for t in shardable_tensors]


class _Forgetful(tf.train.experimental.ShardingCallback):
    description = "drops a tensor"

    def __call__(self, shardable_tensors):
        return [{t.checkpoint_key: {t.slice_spec: t.tensor}} for t in shardable_tensors[1:]]


def test_checkpoint_sharding_policies(tmp_path):
    values = {name: np.full([100], k, np.float32) for k, name in enumerate("abc")}
    variables = {name: tf.Variable(value, name=name) for name, value in values.items()}
    checkpoint = tf.train.Checkpoint(**variables)
    experimental = tf.train.experimental
    cases = [(experimental.MaxShardSizePolicy(500), 3),   # 400 + 400 + (400 + 8) bytes
             (experimental.ShardByTaskPolicy(), 1), (_EveryTensorAlone(), 4)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for index, (policy, shards) in enumerate(cases):
            prefix = str(tmp_path / f"ckpt{index}")
            path = checkpoint.write(prefix, sess, options=tf.train.CheckpointOptions(
                experimental_sharding_callback=policy))
            files = [f for f in os.listdir(tmp_path) if f.startswith(f"ckpt{index}.data")]
            assert len(files) == shards, (policy.description, files)
            sess.run([v.assign(np.zeros(100)) for v in variables.values()])
            checkpoint.restore(path).run_restore_ops(sess)
            for name, variable in variables.items():
                np.testing.assert_array_equal(sess.run(variable), values[name])
        with pytest.raises(ValueError, match="every checkpoint key exactly once"):
            checkpoint.write(str(tmp_path / "bad"), sess, options=tf.train.CheckpointOptions(
                experimental_sharding_callback=_Forgetful()))
    with pytest.raises(ValueError, match="max_shard_size must be >= 1"):
        experimental.MaxShardSizePolicy(0)


def test_profiler_advise_and_op_log(tmp_path):
    x = tf.placeholder(tf.float32, [8, 16])
    w = tf.Variable(tf.ones([16, 32]))
    y = tf.matmul(x, w)
    images = tf.zeros([1, 3, 8, 8])
    tf.nn.bias_add(images, tf.zeros([3]), data_format="NCHW", name="nchw_bias")
    advice = tf.profiler.advise()
    assert isinstance(advice, tf.profiler.AdviceProto)
    assert set(advice.checkers) == set(tf.profiler.ALL_ADVICE)
    expensive = advice.checkers["ExpensiveOperationChecker"].reports
    assert expensive[0].startswith("top 1 operation type by float operations") and \
        "MatMul, 8192 flops" in expensive[0]
    assert "nchw_bias" in advice.checkers["OperationChecker"].reports[0]
    with tf.Session() as sess:
        sess.run(w.initializer)
        run_meta = tf.RunMetadata()
        sess.run(y, {x: np.ones([8, 16])}, options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE), run_metadata=run_meta)
    timed = tf.profiler.advise(run_meta=run_meta, options={"ExpensiveOperationChecker": {}})
    assert list(timed.checkers) == ["ExpensiveOperationChecker"]
    assert timed.checkers["ExpensiveOperationChecker"].reports[0].startswith("top 1 operation")
    with pytest.raises(ValueError, match="unknown checkers"):
        tf.profiler.advise(options={"Nope": {}})
    op_log = tf.profiler.OpLogProto()
    entry = op_log.log_entries.add(name=y.op.name, float_ops=7)
    entry.types.append("_trainable_variables")
    back = tf.profiler.OpLogProto.FromString(op_log.SerializeToString())
    tf.profiler.write_op_log(tf.get_default_graph(), str(tmp_path), op_log=back)
    lines = (tmp_path / "tfprof_log").read_text().splitlines()
    assert f"{y.op.name}\tMatMul\t7\t_trainable_variables" in lines
