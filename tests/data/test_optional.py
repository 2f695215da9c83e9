"""tf.data.experimental.Optional and get_next_as_optional: values, emptiness at the end of
data, and the error of reading an empty optional."""
import numpy as np
import pytest

import tensorweave as tf

exp = tf.data.experimental


def test_get_next_as_optional_reads_then_reports_the_end():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(3).map(lambda x: {"v": x * 10, "s": tf.as_string(x)})
        iterator = tf.data.make_initializable_iterator(dataset)
        optional = exp.get_next_as_optional(iterator)
        assert optional.element_spec == dataset.element_spec
        assert exp.OptionalStructure is exp.OptionalSpec
        assert optional._type_spec == exp.OptionalSpec(dataset.element_spec)
        has_value = optional.has_value()
        value = optional.get_value()
        with tf.Session() as sess:
            sess.run(iterator.initializer)
            seen = []
            while sess.run(has_value):  # a drain loop ends: each run reads one element
                pass
            sess.run(iterator.initializer)
            for _ in range(3):
                got = sess.run(value)
                seen.append((int(got["v"]), bytes(got["s"])))
            with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
                sess.run(value)
            flags = []
            sess.run(iterator.initializer)
            for _ in range(4):
                flags.append(bool(sess.run(has_value)))
    assert seen == [(0, b"0"), (10, b"1"), (20, b"2")]
    assert flags == [True, True, True, False]


def test_optional_from_value_and_empty():
    with tf.Graph().as_default():
        full = exp.Optional.from_value((np.float32(1.5), np.arange(3)))
        empty = exp.Optional.empty(full.element_spec)
        assert empty.element_spec == full.element_spec
        with tf.Session() as sess:
            flag, (number, array) = sess.run([full.has_value(), full.get_value()])
            assert flag and number == 1.5 and array.tolist() == [0, 1, 2]
            assert not sess.run(empty.has_value())
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
            with tf.Session() as sess:
                sess.run(empty.get_value())
    with pytest.raises(TypeError, match="get_next_as_optional"):
        exp.get_next_as_optional(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match="TensorSpecs"):
        exp.Optional.empty([1])
