"""Without the onnx package, `tensorweave export` fails with the install command, not a
traceback (the package is an optional extra)."""
import sys

import tensorweave as tf
from tensorweave.cli import main as cli_main


def test_export_names_the_extra_when_onnx_is_missing(tmp_path, monkeypatch, capsys):
    export_dir = str(tmp_path / "saved")
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [None, 4], name="images")
        with tf.Session() as session:
            tf.saved_model.simple_save(session, export_dir, {"images": images},
                                       {"out": tf.nn.relu(images)})
    monkeypatch.setitem(sys.modules, "onnx", None)  # what `import onnx` meets when absent
    assert cli_main.main(["export", "--onnx", str(tmp_path / "m.onnx"), "--saved-model",
                          export_dir]) == 2
    assert "pip install 'tensorweave[onnx]'" in capsys.readouterr().err
    assert not (tmp_path / "m.onnx").exists()


def test_export_from_a_missing_checkpoint_is_clear(tmp_path, capsys):
    prefix = str(tmp_path / "nowhere" / "model")
    assert cli_main.main(["export", "--onnx", str(tmp_path / "m.onnx"), "--checkpoint", prefix,
                          "--inputs", "x", "--outputs", "y"]) == 2
    assert f"No meta graph at {prefix}.meta" in capsys.readouterr().err
