"""tf.experimental.ExtensionType and the dispatch_for_* registries: fields converted to their
annotations, validated and frozen, specs, fetch and feed through Session.run, elementwise and
tf.concat dispatch to registered handlers (values checked against NumPy), batching."""
import typing

import numpy as np
import pytest

import tensorweave as tf

X = tf.experimental


class MaskedTensor(X.ExtensionType):
    values: tf.Tensor
    mask: tf.Tensor
    label: str = "masked"

    def __validate__(self):
        self.values.shape.assert_is_compatible_with(self.mask.shape)
        if self.mask.dtype != tf.bool:
            raise ValueError("mask must be bool")


class Shaped(X.ExtensionType):
    shape: tf.TensorShape
    dtype: tf.DType
    sizes: typing.Tuple[int, ...]
    extra: typing.Optional[float] = None

    def __init__(self, shape, dtype, sizes=()):
        self.shape, self.dtype, self.sizes = shape, dtype, sizes


def test_fields_are_converted_validated_and_frozen():
    value = MaskedTensor([1.0, 2.0], [True, False])
    assert isinstance(value.values, tf.Tensor) and value.mask.dtype == tf.bool
    assert value.label == "masked"
    with pytest.raises(AttributeError, match="Cannot mutate attribute 'values'"):
        value.values = tf.zeros([2])
    with pytest.raises(ValueError, match="mask must be bool"):
        MaskedTensor([1.0], [1])
    with pytest.raises(TypeError, match="MaskedTensor.label: expected str"):
        MaskedTensor([1.0], [True], label=3)
    with pytest.raises(TypeError, match="missing required field 'mask'"):
        MaskedTensor([1.0])
    shaped = Shaped([2, None], "float32", [1, 2])
    assert shaped.shape.as_list() == [2, None] and shaped.dtype == tf.float32
    assert shaped.sizes == (1, 2) and shaped.extra is None
    assert X.extension_type.as_dict(shaped)["sizes"] == (1, 2)
    spec = value._type_spec
    assert isinstance(spec, X.ExtensionTypeSpec) and isinstance(spec, tf.TypeSpec)
    assert spec == MaskedTensor.Spec(values=tf.TensorSpec([2], tf.float32),
                                     mask=tf.TensorSpec([2], tf.bool), label="masked")
    assert spec.is_compatible_with(MaskedTensor([3.0, 4.0], [False, False]))
    assert not spec.is_compatible_with(MaskedTensor([3.0], [False]))


def test_fetch_and_feed():
    values = tf.placeholder(tf.float32, [None])
    value = MaskedTensor(values, tf.greater(values, 0.0))
    with tf.Session() as sess:
        fetched = sess.run(value, {values: [1.0, -2.0]})
        fed = sess.run(value.values * 2.0, {value: MaskedTensor(np.array([5.0]),
                                                                np.array([True]))})
    assert isinstance(fetched, MaskedTensor)
    np.testing.assert_array_equal(fetched.mask, [True, False])
    np.testing.assert_allclose(fed, [10.0])


def test_dispatch_handlers():
    @X.dispatch_for_unary_elementwise_apis(MaskedTensor)
    def unary(api_func, x):
        return MaskedTensor(api_func(x.values), x.mask)

    @X.dispatch_for_binary_elementwise_apis(typing.Union[MaskedTensor, tf.Tensor],
                                            MaskedTensor)
    def binary(api_func, x, y):
        x_values = x.values if isinstance(x, MaskedTensor) else x
        return MaskedTensor(api_func(x_values, y.values), y.mask)

    @X.dispatch_for_api(tf.math.add, {"x": MaskedTensor, "y": MaskedTensor})
    def add(x, y):
        return MaskedTensor(x.values + y.values, tf.logical_and(x.mask, y.mask))

    @X.dispatch_for_binary_elementwise_assert_apis(MaskedTensor, MaskedTensor)
    def asserts(assert_func, x, y):
        return assert_func(tf.boolean_mask(x.values, tf.logical_and(x.mask, y.mask)),
                           tf.boolean_mask(y.values, tf.logical_and(x.mask, y.mask)))

    @X.dispatch_for_api(tf.concat, {"values": typing.List[MaskedTensor]})
    def concat(values, axis, name=None):
        return MaskedTensor(tf.concat([v.values for v in values], axis),
                            tf.concat([v.mask for v in values], axis))

    a = MaskedTensor([1.0, -2.0], [True, False])
    b = MaskedTensor([3.0, 4.0], [True, True])
    try:
        results = [tf.abs(a), tf.math.add(a, b), tf.multiply(tf.constant([2.0, 2.0]), b),
                   tf.concat([a, b], 0)]
        hidden = MaskedTensor([5.0, 9.0], [True, False])
        passes = tf.debugging.assert_equal(hidden, MaskedTensor([5.0, -1.0], [True, True]))
        fails = tf.debugging.assert_less(hidden, MaskedTensor([1.0, 10.0], [True, True]))
        with tf.Session() as sess:
            got = sess.run(results)
            sess.run(passes)                    # the masked-out 9 vs -1 is not compared
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(fails)
        np.testing.assert_allclose(got[0].values, [1.0, 2.0])
        np.testing.assert_allclose(got[1].values, [4.0, 2.0])
        np.testing.assert_array_equal(got[1].mask, [True, False])
        np.testing.assert_allclose(got[2].values, [6.0, 8.0])
        np.testing.assert_allclose(got[3].values, [1.0, -2.0, 3.0, 4.0])
    finally:
        for handler in (unary, binary, add, concat, asserts):
            X.unregister_dispatch_for(handler)
    with pytest.raises(TypeError, match="no dispatch handler"):
        tf.abs(a)
    with pytest.raises(ValueError, match="was not registered"):
        X.unregister_dispatch_for(unary)
    with pytest.raises(ValueError, match="does not support dispatch"):
        X.dispatch_for_api(tf.reshape, {"tensor": MaskedTensor})


class Points(X.BatchableExtensionType):
    xy: tf.Tensor


def test_batch_encoder_stacks_and_splits():
    encoder = X.ExtensionTypeBatchEncoder()
    batched = encoder.batch([Points([1.0, 2.0]), Points([3.0, 4.0])])
    parts = encoder.unbatch(batched)
    with tf.Session() as sess:
        got = sess.run([batched] + parts)
    np.testing.assert_allclose(got[0].xy, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(got[2].xy, [3.0, 4.0])
    assert len(encoder.encode(batched)) == 1
