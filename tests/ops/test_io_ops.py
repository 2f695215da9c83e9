"""Checkpoint I/O ops (SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename): values round
trip in every dtype and shape, slices reassemble, and the files are the documented layout —
checked by an independent safetensors reader written here from the format's definition."""
import json
import os
import struct
import zlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import checkpoint_format
from tensorweave.ops import io_ops

COVERED_OP_TYPES = {"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename"}

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "bool"]
SHAPES = [(), (0,), (5,), (2, 3), (2, 1, 4)]
SAFETENSORS_CODES = {"float16": "F16", "float32": "F32", "float64": "F64", "int8": "I8",
                     "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8",
                     "uint16": "U16", "bool": "BOOL"}


def _value(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def read_safetensors(path):
    """An independent reader: 8-byte little-endian header size, JSON header, raw bytes."""
    with open(path, "rb") as handle:
        blob = handle.read()
    (size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + size])
    data = blob[8 + size:]
    tensors = {}
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        code_to_dtype = {code: name for name, code in SAFETENSORS_CODES.items()}
        dtype = np.dtype(code_to_dtype[entry["dtype"]]).newbyteorder("<")
        tensors[key] = np.frombuffer(data[begin:end], dtype=dtype).reshape(entry["shape"])
    return header, tensors


def _save_and_restore(tmp_path, values, specs=None):
    names = [f"t{index}" for index in range(len(values))]
    specs = specs or [""] * len(values)
    prefix = str(tmp_path / "ckpt")
    save = io_ops.save_v2(tf.constant(prefix), names, specs, [tf.constant(v) for v in values])
    restored = io_ops.restore_v2(tf.constant(prefix), names, specs,
                                 [tf.as_dtype(np.asarray(v).dtype) for v in values])
    with tf.Session() as sess:
        sess.run(save)
        return prefix, sess.run(restored)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_and_shape_round_trips(tmp_path, dtype):
    values = [_value(dtype, shape, seed) for seed, shape in enumerate(SHAPES)]
    _, restored = _save_and_restore(tmp_path, values)
    for value, back in zip(values, restored):
        back = np.asarray(back)
        assert back.dtype == value.dtype and back.shape == value.shape
        np.testing.assert_array_equal(back, value)


def test_data_file_is_plain_safetensors_with_the_documented_index(tmp_path):
    values = [_value("float32", (2, 3)), _value("int64", (4,)), _value("bool", ())]
    prefix, _ = _save_and_restore(tmp_path, values)
    assert sorted(os.listdir(tmp_path)) == ["ckpt.data-00000-of-00001.safetensors",
                                            "ckpt.index.json"]
    header, tensors = read_safetensors(tmp_path / "ckpt.data-00000-of-00001.safetensors")
    for index, value in enumerate(values):
        assert header[f"t{index}"]["dtype"] == SAFETENSORS_CODES[value.dtype.name]
        np.testing.assert_array_equal(tensors[f"t{index}"], value)
    offsets = sorted(tuple(e["data_offsets"]) for k, e in header.items() if k != "__metadata__")
    assert offsets[0][0] == 0 and all(a[1] == b[0] for a, b in zip(offsets, offsets[1:]))
    with open(tmp_path / "ckpt.data-00000-of-00001.safetensors", "rb") as handle:
        assert struct.unpack("<Q", handle.read(8))[0] % 8 == 0  # header padded to 8 bytes
    index = json.loads((tmp_path / "ckpt.index.json").read_text())
    assert index["format"] == "tensorweave-checkpoint" and index["version"] == 1
    assert index["shards"] == ["ckpt.data-00000-of-00001.safetensors"]
    assert index["tensors"]["t0"] == {"dtype": "float32", "shape": [2, 3], "slices": [
        {"shard": 0, "key": "t0", "start": [0, 0], "extent": [2, 3],
         "crc32": zlib.crc32(values[0].astype("<f4").tobytes())}]}


def test_slices_are_saved_as_one_tensor_and_restored_in_any_slicing(tmp_path):
    full = _value("float64", (7, 3))
    prefix = str(tmp_path / "sliced")
    specs = ["7 3 0,4:-", "7 3 4,3:0,3"]
    save = io_ops.save_v2(tf.constant(prefix), ["w", "w"], specs,
                          [tf.constant(full[:4]), tf.constant(full[4:])])
    wanted = ["", "7 3 2,4:1,2", "7 3 6,1:-"]
    restored = io_ops.restore_v2(tf.constant(prefix), ["w"] * 3, wanted, [tf.float64] * 3)
    assert [t.shape.as_list() for t in restored[1:]] == [[4, 2], [1, 3]]
    with tf.Session() as sess:
        sess.run(save)
        whole, middle, last = sess.run(restored)
    np.testing.assert_array_equal(whole, full)
    np.testing.assert_array_equal(middle, full[2:6, 1:3])
    np.testing.assert_array_equal(last, full[6:7])


def test_merge_moves_shards_into_one_checkpoint_and_writes_the_index_last(tmp_path):
    prefix = str(tmp_path / "model")
    parts = [io_ops.sharded_filename(tf.constant(prefix), index, 2) for index in range(2)]
    saves = [io_ops.save_v2(parts[0], ["a"], [""], [tf.constant([1.0, 2.0])]),
             io_ops.save_v2(parts[1], ["b"], [""], [tf.constant(3, tf.int64)])]
    with tf.control_dependencies(saves):
        merge = io_ops.merge_v2_checkpoints(parts, tf.constant(prefix))
    restored = io_ops.restore_v2(tf.constant(prefix), ["b", "a"], ["", ""], [tf.int64,
                                                                            tf.float32])
    with tf.Session() as sess:
        assert sess.run(parts[1]) == prefix.encode() + b"-00001-of-00002"
        sess.run(merge)
        b_value, a_value = sess.run(restored)
    assert b_value == 3 and list(a_value) == [1.0, 2.0]
    assert sorted(os.listdir(tmp_path)) == ["model.data-00000-of-00002.safetensors",
                                            "model.data-00001-of-00002.safetensors",
                                            "model.index.json"]


def test_resaving_a_prefix_keeps_the_old_checkpoint_valid_until_the_new_index(tmp_path):
    prefix = str(tmp_path / "again")
    checkpoint_format.write_checkpoint(prefix, ["x"], [""], [np.arange(3.0)])
    old_index = json.loads((tmp_path / "again.index.json").read_text())
    checkpoint_format.write_checkpoint(prefix, ["x"], [""], [np.arange(5.0)])
    new_index = json.loads((tmp_path / "again.index.json").read_text())
    assert new_index["shards"] != old_index["shards"]  # fresh data file names
    assert not (tmp_path / old_index["shards"][0]).exists()  # replaced, then removed
    reader = checkpoint_format.CheckpointReader(prefix)
    np.testing.assert_array_equal(reader.get_tensor("x"), np.arange(5.0))


def test_a_failed_write_leaves_no_file_and_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    prefix = str(tmp_path / "safe")
    checkpoint_format.write_checkpoint(prefix, ["x"], [""], [np.ones(4)])

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_format.os, "replace", crash)
    with pytest.raises(OSError):
        checkpoint_format.write_checkpoint(prefix, ["x"], [""], [np.zeros(4)])
    monkeypatch.undo()
    assert not [name for name in os.listdir(tmp_path) if ".tmp-" in name]
    np.testing.assert_array_equal(checkpoint_format.CheckpointReader(prefix).get_tensor("x"),
                                  np.ones(4))


def test_errors_name_the_tensor_and_the_fix(tmp_path):
    prefix = str(tmp_path / "e")
    checkpoint_format.write_checkpoint(prefix, ["x"], [""], [np.ones(2, np.float32)])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="Key y not found"):
            sess.run(io_ops.restore_v2(tf.constant(prefix), ["y"], [""], [tf.float32]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="saved as float32"):
            sess.run(io_ops.restore_v2(tf.constant(prefix), ["x"], [""], [tf.int32]))
        with pytest.raises(tf.errors.NotFoundError, match="no checkpoint"):
            sess.run(io_ops.restore_v2(tf.constant(prefix + "x"), ["x"], [""], [tf.float32]))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Cannot save tensor 'c' of dtype complex64"):
            sess.run(io_ops.save_v2(tf.constant(prefix), ["c"], [""],
                                    [tf.constant([1 + 2j], tf.complex64)]))
