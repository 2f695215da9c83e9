"""TF 1.x's own module paths (tensorflow.python.*, tensorflow.core.*) that programs import:
every mapped path imports and answers with tensorweave's objects, under `tensorweave.` and
under an alias root; device_lib, inspect_checkpoint, freeze_graph and file_io work."""
import importlib
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.compat import source_paths


@pytest.mark.parametrize("key", sorted(source_paths.MODULES))
def test_every_path_imports_and_has_names(key):
    module = importlib.import_module(f"tensorweave.{key}")
    public = [n for n in vars(module) if not n.startswith("_")]
    assert public, key
    with pytest.raises(AttributeError, match="not provided by tensorweave"):
        module.certainly_not_a_tf_name


def test_paths_answer_with_the_same_objects():
    from tensorweave.python.framework import ops
    from tensorweave.python.ops import math_ops, rnn_cell_impl, variable_scope
    from tensorweave.python.training import moving_averages
    from tensorweave.core.framework import summary_pb2
    assert ops.Graph is tf.Graph and ops.get_default_graph is tf.get_default_graph
    assert math_ops.reduce_sum is tf.reduce_sum and rnn_cell_impl.LSTMCell is \
        tf.nn.rnn_cell.LSTMCell
    assert variable_scope.get_variable is tf.get_variable
    assert moving_averages.ExponentialMovingAverage is tf.train.ExponentialMovingAverage
    assert summary_pb2.Summary is tf.Summary


def test_device_lib_lists_the_cpus():
    from tensorweave.python.client import device_lib
    devices = device_lib.list_local_devices()
    assert [d.name for d in devices] == ["/device:CPU:0"] and devices[0].device_type == "CPU"
    assert not [d for d in devices if d.device_type == "GPU"]
    two = device_lib.list_local_devices(tf.ConfigProto(device_count={"CPU": 2}))
    assert [d.name for d in two] == ["/device:CPU:0", "/device:CPU:1"]


def _save_model(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0, -2.0], [0.5, 3.0]], name="w")
        b = tf.Variable([0.25, -0.5], name="b")
        tf.nn.relu(tf.matmul(x, w) + b, name="out")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, prefix)
        tf.train.write_graph(graph.as_graph_def(), str(tmp_path), "graph.pbtxt")
    return prefix


def test_inspect_checkpoint_prints_names_shapes_and_values(tmp_path, capsys):
    from tensorweave.python.tools import inspect_checkpoint
    prefix = _save_model(tmp_path)
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix, "", all_tensors=False)
    out = capsys.readouterr().out
    assert "b (float32) [2]" in out and "w (float32) [2, 2]" in out
    assert "# Total number of params: 6" in out
    inspect_checkpoint.print_tensors_in_checkpoint_file(prefix, "b", all_tensors=False)
    assert "tensor_name:  b" in capsys.readouterr().out


def test_freeze_graph_makes_a_constant_graph_that_computes_the_same(tmp_path):
    from tensorweave.python.tools import freeze_graph
    prefix = _save_model(tmp_path)
    output = str(tmp_path / "frozen.pb")
    freeze_graph.freeze_graph(str(tmp_path / "graph.pbtxt"), "", False, prefix, "out",
                              "save/restore_all", "save/Const:0", output, True, "")
    graph_def = tf.GraphDef()
    graph_def.ParseFromString(pathlib.Path(output).read_bytes())
    assert not [n for n in graph_def.node if n.op in ("VariableV2", "Variable")]
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            got = sess.run("out:0", {"x:0": [[1.0, 1.0], [2.0, -1.0]]})
    np.testing.assert_allclose(got, np.maximum([[1.75, 0.5], [1.75, -7.5]], 0))
    with pytest.raises(ValueError, match="doesn't exist"):
        freeze_graph.freeze_graph(str(tmp_path / "graph.pbtxt"), "", False,
                                  str(tmp_path / "nothing"), "out", "", "", output, True, "")


def test_file_io(tmp_path):
    from tensorweave.python.lib.io import file_io
    path = str(tmp_path / "d" / "e" / "f.txt")
    file_io.recursive_create_dir(str(tmp_path / "d" / "e"))
    file_io.write_string_to_file(path, "hello")
    assert file_io.file_exists(path) and file_io.read_file_to_string(path) == "hello"
    assert file_io.read_file_to_string(path, binary_mode=True) == b"hello"
    file_io.atomic_write_string_to_file(path, "again")
    assert file_io.read_file_to_string(path) == "again"
    assert file_io.list_directory(str(tmp_path / "d")) == ["e"]
    assert file_io.get_matching_files(str(tmp_path / "d" / "e" / "*.txt")) == [path]
    with file_io.FileIO(path, "a") as handle:
        handle.write("!")
    assert file_io.read_file_to_string(path) == "again!"
    file_io.delete_recursively(str(tmp_path / "d"))
    assert not file_io.is_directory(str(tmp_path / "d"))


def test_a_program_importing_tf_paths_runs_through_the_tensorflow_alias(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import numpy as np\n"
        "import tensorflow as tf\n"
        "from tensorflow.python.framework import ops, dtypes\n"
        "from tensorflow.python.ops import control_flow_ops, math_ops, init_ops\n"
        "from tensorflow.python.training import moving_averages\n"
        "from tensorflow.python.client import device_lib\n"
        "x = tf.placeholder(dtypes.float32, [None, 3])\n"
        "mean = tf.get_variable('mean', [3], initializer=init_ops.zeros_initializer(),\n"
        "                       trainable=False)\n"
        "batch_mean = math_ops.reduce_mean(x, 0)\n"
        "update = moving_averages.assign_moving_average(mean, batch_mean, 0.5,\n"
        "                                               zero_debias=False)\n"
        "with ops.control_dependencies([update]):\n"
        "    out = control_flow_ops.with_dependencies([update], tf.identity(batch_mean))\n"
        "with tf.Session() as sess:\n"
        "    sess.run(tf.global_variables_initializer())\n"
        "    sess.run(out, {x: np.ones((4, 3))})\n"
        "    print(sess.run(mean).tolist(), len(device_lib.list_local_devices()))\n")
    harness = pathlib.Path(__file__).resolve().parents[1] / "examples" / "run_as_tensorflow.py"
    repo = str(pathlib.Path(__file__).resolve().parents[2])
    result = subprocess.run([sys.executable, str(harness), str(script)], capture_output=True,
                            text=True, timeout=120, cwd=repo,
                            env={**os.environ, "PYTHONPATH": repo})
    assert result.stdout.strip() == "[0.5, 0.5, 0.5] 1", result.stderr
