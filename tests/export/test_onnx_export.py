"""`tensorweave export --onnx`: the exported model computes, in ONNX Runtime, what tensorweave
computes with the same weights (to 1e-5), for the MNIST softmax regression, the MLP and the
LeNet, from a SavedModel or a checkpoint; ops without a rule fail naming their type."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.cli import main as cli_main
from tensorweave.cli.signature_model import SignatureModel
from tests.export import models

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.timeout(120)


def _onnx_session(path):
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def _assert_same_predictions(onnx_path, reference, images):
    session = _onnx_session(onnx_path)
    names = [value.name for value in session.get_outputs()]
    got = dict(zip(names, session.run(None, {"images": images})))
    assert sorted(got) == ["classes", "probabilities"]
    np.testing.assert_allclose(got["probabilities"], reference["probabilities"], rtol=0,
                               atol=1e-5)
    np.testing.assert_array_equal(got["classes"], reference["classes"])
    assert got["classes"].dtype == np.int64


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_exported_saved_model_matches_tensorweave(tmp_path, capsys, name):
    export_dir, onnx_path = str(tmp_path / "saved"), str(tmp_path / f"{name}.onnx")
    models.train_and_save(models.MODELS[name], export_dir)
    assert cli_main.main(["export", "--onnx", onnx_path, "--saved-model", export_dir]) == 0
    assert f"wrote {onnx_path}" in capsys.readouterr().out
    images, _ = models.digits(17, seed=5)
    model = SignatureModel.from_saved_model(export_dir)
    try:
        reference = model.run({"images": images})
    finally:
        model.close()
    assert reference["probabilities"].shape == (17, 10)
    # The training did move the weights: the softmax regression starts at all-zero weights.
    assert np.ptp(reference["probabilities"]) > 1e-3
    _assert_same_predictions(onnx_path, reference, images)
    loaded = onnx.load(onnx_path)
    assert {op.op_type for op in loaded.graph.node} >= (
        {"Conv", "MaxPool", "Transpose"} if name == "lenet" else {"MatMul", "Softmax"})


def test_export_from_checkpoint_and_meta_graph(tmp_path):
    prefix = str(tmp_path / "model")
    names = models.train_and_save(models.mlp, str(tmp_path / "saved"), prefix)
    onnx_path = str(tmp_path / "mlp.onnx")
    assert cli_main.main(["export", "--onnx", onnx_path, "--checkpoint", prefix,
                          "--inputs", f"images={names['images']}",
                          "--outputs", f"probabilities={names['probabilities']},"
                          f"classes={names['classes']}"]) == 0
    images, _ = models.digits(9, seed=2)
    model = SignatureModel.from_saved_model(str(tmp_path / "saved"))
    try:
        reference = model.run({"images": images})
    finally:
        model.close()
    _assert_same_predictions(onnx_path, reference, images)


def _save_graph(tmp_path, build):
    export_dir = str(tmp_path / "saved")
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [None, 4], name="images")
        with tf.Session() as session:
            tf.saved_model.simple_save(session, export_dir, {"images": images},
                                       {"out": build(images)})
    return export_dir


def test_unsupported_op_fails_naming_its_type(tmp_path, capsys):
    export_dir = _save_graph(tmp_path, lambda x: tf.sin(x) + tf.cos(x))
    onnx_path = str(tmp_path / "never.onnx")
    assert cli_main.main(["export", "--onnx", onnx_path, "--saved-model", export_dir]) == 2
    error = capsys.readouterr().err
    assert "['Cos', 'Sin']" in error and "no rule" in error
    assert not (tmp_path / "never.onnx").exists()


def test_unfrozen_variables_are_refused_with_the_fix():
    from tensorweave.framework.onnx_export import UnsupportedOpError, graph_def_to_onnx

    images = tf.placeholder(tf.float32, [None, 3], name="images")
    out = tf.matmul(images, tf.Variable(tf.ones([3, 2]), name="weights"))
    with pytest.raises(UnsupportedOpError, match="convert_variables_to_constants"):
        graph_def_to_onnx(tf.get_default_graph().as_graph_def(),
                          [("images", images.name, tf.float32, [None, 3])],
                          [("out", out.name, tf.float32, [None, 2])])


def test_missing_signature_and_missing_directory_are_clear(tmp_path, capsys):
    export_dir = _save_graph(tmp_path, tf.nn.relu)
    assert cli_main.main(["export", "--onnx", str(tmp_path / "a.onnx"), "--saved-model",
                          export_dir, "--signature", "nope"]) == 2
    assert "no signature 'nope'" in capsys.readouterr().err
    assert cli_main.main(["export", "--onnx", str(tmp_path / "a.onnx"), "--saved-model",
                          str(tmp_path / "absent")]) == 2
    assert "No SavedModel" in capsys.readouterr().err
