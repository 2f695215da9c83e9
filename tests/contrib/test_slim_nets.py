"""tf.contrib.slim.nets: the TF-Slim image nets build with TF-Slim's variable names, counts,
end points and output shapes; resnet_utils' padding, subsampling and atrous output_stride
against NumPy; a small ResNet trains, and batch norm switches to its moving statistics."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.contrib.slim.nets import (alexnet, inception, overfeat, resnet_utils,
                                           resnet_v1, resnet_v2, vgg)

slim = tf.contrib.slim


def _build(net_fn, arg_scope, size, **kwargs):
    graph = tf.Graph()
    with graph.as_default():
        images = tf.placeholder(tf.float32, [2, size, size, 3])
        with slim.arg_scope(arg_scope):
            net, end_points = net_fn(images, **kwargs)
    return graph, images, net, end_points


@pytest.mark.parametrize("net_fn,arg_scope,size,trainable,total,first,end_point", [
    (vgg.vgg_16, vgg.vgg_arg_scope(), 224, 32, 32, "vgg_16/conv1/conv1_1/weights:0",
     "vgg_16/conv5/conv5_3"),
    (vgg.vgg_19, vgg.vgg_arg_scope(), 224, 38, 38, "vgg_19/conv1/conv1_1/weights:0",
     "vgg_19/conv5/conv5_4"),
    (vgg.vgg_a, vgg.vgg_arg_scope(), 224, 22, 22, "vgg_a/conv1/conv1_1/weights:0",
     "vgg_a/pool5"),
    (alexnet.alexnet_v2, alexnet.alexnet_v2_arg_scope(), 224, 16, 16,
     "alexnet_v2/conv1/weights:0", "alexnet_v2/fc7"),
    (overfeat.overfeat, overfeat.overfeat_arg_scope(), 231, 16, 16,
     "overfeat/conv1/weights:0", "overfeat/fc7"),
    (resnet_v1.resnet_v1_50, resnet_v1.resnet_arg_scope(), 224, 161, 267,
     "resnet_v1_50/conv1/weights:0", "resnet_v1_50/block4"),
    (resnet_v2.resnet_v2_50, resnet_v2.resnet_arg_scope(), 224, 174, 272,
     "resnet_v2_50/conv1/weights:0", "resnet_v2_50/block3/unit_6/bottleneck_v2"),
    (inception.inception_v1, inception.inception_v1_arg_scope(), 224, 116, 230,
     "InceptionV1/Conv2d_1a_7x7/weights:0", "Mixed_5b"),
    (inception.inception_v3, inception.inception_v3_arg_scope(), 299, 196, 388,
     "InceptionV3/Conv2d_1a_3x3/weights:0", "AuxLogits"),
])
def test_nets_have_tf_slims_variables_and_end_points(net_fn, arg_scope, size, trainable,
                                                      total, first, end_point):
    graph, _, net, end_points = _build(net_fn, arg_scope, size, num_classes=7)
    with graph.as_default():
        assert len(tf.trainable_variables()) == trainable
        assert len(tf.global_variables()) == total
        assert tf.global_variables()[0].name == first
    assert net.shape.as_list() == [2, 7] and end_point in end_points


def test_mixed_5b_keeps_tf_slims_odd_branch_name_and_resnet_end_point_shapes():
    graph, _, _, end_points = _build(inception.inception_v1, inception.inception_v1_arg_scope(),
                                     224, num_classes=5)
    names = {v.op.name for v in graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)}
    assert "InceptionV1/Mixed_5b/Branch_2/Conv2d_0a_3x3/weights" in names
    assert "InceptionV1/Mixed_5c/Branch_2/Conv2d_0b_3x3/weights" in names
    assert end_points["Mixed_5c"].shape.as_list() == [2, 7, 7, 1024]
    assert end_points["Predictions"].shape.as_list() == [2, 5]
    _, _, _, ep = _build(resnet_v1.resnet_v1_101, resnet_v1.resnet_arg_scope(), 224,
                         num_classes=None, global_pool=False)
    assert ep["resnet_v1_101/block4"].shape.as_list() == [2, 7, 7, 2048]
    # the stride is on a block's last unit
    assert ep["resnet_v1_101/block3/unit_22/bottleneck_v1"].shape.as_list() == [2, 14, 14, 1024]
    assert ep["resnet_v1_101/block3/unit_23/bottleneck_v1"].shape.as_list() == [2, 7, 7, 1024]
    assert ep["resnet_v1_101/block3"] is ep["resnet_v1_101/block3/unit_23/bottleneck_v1"]


def test_inception_v3_has_the_published_size_and_shapes():
    graph, _, _, end_points = _build(inception.inception_v3, inception.inception_v3_arg_scope(),
                                     299, num_classes=None)
    with graph.as_default():
        params = sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables())
        names = {v.op.name for v in tf.global_variables()}
    assert params == 21768352          # Inception v3 without its classifier
    assert "InceptionV3/Mixed_5c/Branch_1/Conv_1_0c_5x5/weights" in names
    assert "InceptionV3/Mixed_7c/Branch_1/Conv2d_0c_3x1/weights" in names
    shapes = {k: end_points[k].shape.as_list()[1:] for k in ("Mixed_5d", "Mixed_6e", "Mixed_7c")}
    assert shapes == {"Mixed_5d": [35, 35, 288], "Mixed_6e": [17, 17, 768],
                      "Mixed_7c": [8, 8, 2048]}
    graph, images, small, small_ep = _build(inception.inception_v3,
                                            inception.inception_v3_arg_scope(), 160,
                                            num_classes=4, depth_multiplier=0.5,
                                            is_training=False)
    assert small.shape.as_list() == [2, 4] and small_ep["Mixed_7c"].shape.as_list()[-1] == 1024
    with graph.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        probs, aux = sess.run([small_ep["Predictions"], small_ep["AuxLogits"]],
                              {images: np.random.default_rng(0).random((2, 160, 160, 3))})
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    assert aux.shape == (2, 4) and np.isfinite(aux).all()


def _np_conv_valid(x, w, stride, rate=1):
    k = w.shape[0]
    keff = k + (k - 1) * (rate - 1)
    out_h = (x.shape[1] - keff) // stride + 1
    out = np.zeros((x.shape[0], out_h, out_h, w.shape[3]))
    for i in range(out_h):
        for j in range(out_h):
            patch = x[:, i * stride:i * stride + keff:rate, j * stride:j * stride + keff:rate, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("size,stride,rate", [(7, 2, 1), (8, 2, 1), (9, 3, 1), (9, 1, 2)])
def test_conv2d_same_pads_explicitly_like_numpy(size, stride, rate):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, size, size, 2))
    w = rng.standard_normal((3, 3, 2, 4))
    with tf.Graph().as_default():
        out = resnet_utils.conv2d_same(tf.constant(x), 4, 3, stride, rate=rate, scope="c")
        weights = tf.trainable_variables()[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(weights, w))
            got, w_used = sess.run([out, weights])
    total = 3 + 2 * (rate - 1) - 1        # SAME at stride 1 pads the same way
    begin = total // 2
    padded = np.pad(x, [(0, 0), (begin, total - begin), (begin, total - begin), (0, 0)])
    want = np.maximum(_np_conv_valid(padded, w_used, stride, rate), 0.0)   # relu, zero bias
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _tiny_resnet(inputs, is_training, output_stride=None, scope="tiny"):
    blocks = [resnet_v1.resnet_v1_block("block1", base_depth=4, num_units=2, stride=2),
              resnet_v1.resnet_v1_block("block2", base_depth=8, num_units=2, stride=1)]
    return resnet_v1.resnet_v1(inputs, blocks, num_classes=3, is_training=is_training,
                               global_pool=True, output_stride=output_stride,
                               include_root_block=False, scope=scope)


def test_atrous_output_stride_keeps_resolution_and_bad_strides_fail():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1, 16, 16, 3])
        with slim.arg_scope(resnet_v1.resnet_arg_scope()):
            _, dense = _tiny_resnet(x, False, output_stride=1, scope="dense")
            _, normal = _tiny_resnet(x, False, scope="normal")
            with pytest.raises(ValueError, match="output_stride cannot be reached"):
                _tiny_resnet(x, False, output_stride=3, scope="bad")
            with pytest.raises(ValueError, match="multiple of 4"):
                resnet_v1.resnet_v1_50(x, output_stride=6, scope="bad50")
    assert dense["dense/block1"].shape.as_list() == [1, 16, 16, 16]
    assert normal["normal/block1"].shape.as_list() == [1, 8, 8, 16]


def test_a_small_resnet_trains_and_evaluates_with_moving_statistics():
    rng = np.random.default_rng(1)
    images = rng.standard_normal((24, 8, 8, 3)).astype(np.float32)
    labels = (images[:, :, :, 0].mean(axis=(1, 2)) > 0).astype(np.int64) + \
        (images[:, :, :, 1].mean(axis=(1, 2)) > 0).astype(np.int64)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 8, 8, 3])
        y = tf.placeholder(tf.int64, [None])
        with slim.arg_scope(resnet_v1.resnet_arg_scope(batch_norm_decay=0.5)):
            logits, _ = _tiny_resnet(x, True)
            with tf.variable_scope(tf.get_variable_scope(), reuse=True):
                eval_logits, _ = _tiny_resnet(x, False)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        train = slim.learning.create_train_op(loss, tf.train.AdamOptimizer(0.01))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss, {x: images, y: labels})
            for _ in range(60):
                last = sess.run(train, {x: images, y: labels})
            moving = [v for v in tf.global_variables() if "moving_mean" in v.name]
            assert moving and any(np.abs(sess.run(m)).max() > 0 for m in moving)
            # evaluation uses the moving statistics: a sample's logits do not depend on the
            # rest of its batch; in training mode (batch statistics) they do
            alone, batch = (sess.run(eval_logits, {x: images[:1]}),
                            sess.run(eval_logits, {x: images}))
            np.testing.assert_allclose(alone[0], batch[0], rtol=1e-4, atol=1e-5)
            alone_t, batch_t = (sess.run(logits, {x: images[:2]}), sess.run(logits, {x: images}))
            assert np.abs(alone_t[0] - batch_t[0]).max() > 1e-3
    assert last < first * 0.5, (first, last)
