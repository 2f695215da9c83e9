"""contrib.layers' wide-and-deep era feature-column functions, on the core columns:
crossed / vocabulary-file / weighted / shared-embedding columns, parsing specs, checks,
inference of real-valued columns, and weighted_sum_from_feature_columns as a linear model."""
import numpy as np
import pytest

import tensorweave as tf

L = tf.contrib.layers


def test_weighted_sum_is_a_linear_model_with_one_variable_per_column(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("red\ngreen\nblue\n")
    age = L.real_valued_column("age")
    color = L.sparse_column_with_vocabulary_file("color", str(vocab))
    city = L.sparse_column_with_hash_bucket("city", 20)
    cross = L.crossed_column([color, city], hash_bucket_size=50)
    columns = [age, color, cross]
    L.check_feature_columns(columns)
    with tf.Graph().as_default():
        features = {"age": tf.constant([[1.0], [2.0]]),
                    "color": tf.constant([["blue"], ["pink"]]),
                    "city": tf.constant([["paris"], ["rome"]])}
        predictions, column_vars, bias = L.weighted_sum_from_feature_columns(
            features, columns, num_outputs=1)
        assert set(column_vars) == set(columns) and bias.shape.as_list() == [1]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            sess.run([tf.assign(column_vars[age][0], [[0.5]]), tf.assign(bias, [1.0]),
                      tf.assign(column_vars[color][0], [[10.0], [20.0], [30.0]])])
            out = sess.run(predictions)
    # age * 0.5 + bias + the color weight (blue = id 2; pink is unknown: no weight)
    np.testing.assert_allclose(out, [[1.5 + 30.0], [2.0]])


def test_parsing_specs_weighted_and_shared_columns():
    words = L.sparse_column_with_keys("words", ["a", "b", "c"])
    weighted = L.weighted_sparse_column(words, "word_weights")
    tags = L.sparse_column_with_keys("tags", ["x", "y", "z"])
    shared = L.shared_embedding_columns([words, tags], dimension=4)
    assert len(shared) == 2
    spec = L.create_feature_spec_for_parsing([L.real_valued_column("age", 2), weighted])
    assert set(spec) == {"age", "words", "word_weights"}
    example = tf.train.Example(features=tf.train.Features(feature={
        "age": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])),
        "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"b"])),
        "word_weights": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5]))}))
    with tf.Graph().as_default():
        parsed = L.parse_feature_columns_from_examples(
            [example.SerializeToString()], [L.real_valued_column("age", 2), weighted])
        with tf.Session() as sess:
            age = sess.run(parsed["age"])
    np.testing.assert_array_equal(age, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="Duplicate feature column"):
        L.check_feature_columns([words, L.sparse_column_with_keys("words", ["q"])])


def test_infer_real_valued_columns():
    with tf.Graph().as_default():
        columns = L.infer_real_valued_columns({"x": tf.placeholder(tf.float32, [None, 3]),
                                               "n": tf.placeholder(tf.int64, [None])})
    by_key = {c.key: c for c in columns}
    assert by_key["x"].shape == (3,) and by_key["n"].dtype == tf.int64
