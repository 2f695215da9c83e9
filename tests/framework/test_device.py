"""DeviceSpec: parsing the full and short device forms, and how nested specs merge."""
import pytest

import tensorweave as tf
from tensorweave.framework import device as device_lib

FULL = "/job:worker/replica:1/task:2/device:GPU:3"


def fields(spec):
    return (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index)


def test_full_form_parses_every_field_and_round_trips():
    spec = tf.DeviceSpec.from_string(FULL)
    assert fields(spec) == ("worker", 1, 2, "GPU", 3)
    assert spec.to_string() == FULL
    assert str(spec) == FULL
    assert tf.DeviceSpec.from_string(spec.to_string()) == spec


@pytest.mark.parametrize("text,expected", [
    ("/cpu:0", (None, None, None, "CPU", 0)),
    ("/gpu:1", (None, None, None, "GPU", 1)),
    ("/GPU:1", (None, None, None, "GPU", 1)),
    ("/task:2", (None, None, 2, None, None)),
    ("/job:ps", ("ps", None, None, None, None)),
    ("/replica:4", (None, 4, None, None, None)),
    ("/device:cpu:0", (None, None, None, "CPU", 0)),
    ("/device:GPU:*", (None, None, None, "GPU", None)),
    ("/gpu:*", (None, None, None, "GPU", None)),
    ("/device:CPU", (None, None, None, "CPU", None)),
    ("/cpu", (None, None, None, "CPU", None)),
    ("/job:ps/task:0/cpu:0", ("ps", None, 0, "CPU", 0)),
    ("", (None, None, None, None, None)),
])
def test_short_forms_and_case_insensitive_types(text, expected):
    assert fields(tf.DeviceSpec.from_string(text)) == expected


@pytest.mark.parametrize("text,canonical", [
    ("/cpu:0", "/device:CPU:0"),
    ("/gpu:1", "/device:GPU:1"),
    ("/task:2", "/task:2"),
    ("/job:ps/task:0/cpu:0", "/job:ps/task:0/device:CPU:0"),
    ("/device:gpu:*", "/device:GPU:*"),
    ("", ""),
])
def test_canonical_names(text, canonical):
    assert device_lib.canonical_name(text) == canonical


@pytest.mark.parametrize("bad", ["/job:ps/bogus:1", "/task:x", "/task:-1", "/cpu:zero",
                                 "/device:GPU:0:1", "/cpu:0/gpu:1"])
def test_malformed_specs_raise_value_error(bad):
    with pytest.raises(ValueError):
        tf.DeviceSpec.from_string(bad)


def test_constructor_normalises_type_and_wildcard_index():
    spec = tf.DeviceSpec(job="ps", task=0, device_type="gpu", device_index="*")
    assert spec.to_string() == "/job:ps/task:0/device:GPU:*"


def test_merge_from_lets_the_argument_win():
    spec = tf.DeviceSpec.from_string("/job:ps/task:0/device:CPU:0")
    spec.merge_from("/task:3/gpu:1")
    assert spec.to_string() == "/job:ps/task:3/device:GPU:1"
    merged = tf.DeviceSpec.from_string("/job:a").make_merged_spec(tf.DeviceSpec(task=1))
    assert merged.to_string() == "/job:a/task:1"


def test_merge_device_inner_fields_win_outer_fill_unset():
    assert device_lib.merge_device("/job:ps/task:1/cpu:0", "/gpu:2") == \
        "/job:ps/task:1/device:GPU:2"
    assert device_lib.merge_device("/job:worker/task:0", "/job:ps") == "/job:ps/task:0"
    assert device_lib.merge_device("", "/cpu:0") == "/device:CPU:0"
    assert device_lib.merge_device("/cpu:0", "") == "/device:CPU:0"


def test_compatibility():
    spec = tf.DeviceSpec.from_string("/job:ps/task:0")
    assert spec.is_compatible_with("/job:ps/cpu:0")
    assert not spec.is_compatible_with("/job:worker")


def test_copy_and_replace_do_not_alias():
    spec = tf.DeviceSpec.from_string("/job:ps/task:0")
    other = spec.replace(task=5)
    assert spec.task == 0 and other.task == 5
    assert spec.copy() == spec and spec.copy() is not spec
    assert hash(spec.copy()) == hash(spec)
