"""tf.raw_ops: registered ops by keyword arguments, outputs returned as TF's raw ops return
them, and clear errors for missing or unknown arguments."""
import numpy as np
import pytest

import tensorweave as tf


def test_raw_ops_compute_like_the_wrappers():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        product = tf.raw_ops.MatMul(a=x, b=x, transpose_b=True, name="mm")
        summed = tf.raw_ops.Add(x=x, y=1)                         # 1 takes x's dtype
        rows = tf.raw_ops.Unpack(value=x, num=2)
        top = tf.raw_ops.TopKV2(input=x, k=1)
        joined = tf.raw_ops.ConcatV2(values=[x, x], axis=0)
        assert product.op.name == "mm" and isinstance(rows, list) and len(rows) == 2
        assert tf.raw_ops.NoOp().type == "NoOp"
        with tf.Session() as sess:
            p, s, r, values, indices, j = sess.run([product, summed, rows, top.values,
                                                    top.indices, joined])
    data = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(p, data @ data.T)
    np.testing.assert_allclose(s, data + 1)
    np.testing.assert_allclose(r[1], data[1])
    np.testing.assert_allclose(values[:, 0], [2.0, 4.0])
    np.testing.assert_array_equal(indices[:, 0], [1, 1])
    np.testing.assert_allclose(j, np.concatenate([data, data]))


def test_raw_ops_errors_name_the_problem():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        with pytest.raises(TypeError, match="missing input 'b'"):
            tf.raw_ops.MatMul(a=x)
        with pytest.raises(TypeError, match=r"unexpected arguments \['bogus'\]"):
            tf.raw_ops.Neg(x=x, bogus=1)
        with pytest.raises(AttributeError, match="no op 'NotAnOpAtAll'"):
            tf.raw_ops.NotAnOpAtAll
    assert "MatMul" in dir(tf.raw_ops)
