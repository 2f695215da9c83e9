"""A list inside what a Dataset.map function returns is one component, its tensors stacked, as in
TF (`{"x": tf.decode_csv(line, ...)[:-1]}, columns[-1:]` gives an [n] feature and a [1] label,
the CSV idiom of TF 1.x Estimator programs); only a list returned at the top is a tuple."""
import numpy as np

import tensorweave as tf


def _elements(dataset, count):
    value = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return [sess.run(value) for _ in range(count)]


def test_csv_columns_in_a_dict_become_one_feature_vector(tmp_path):
    rows = np.array([[5.1, 3.5, 1.4, 0.2, 0], [6.2, 2.9, 4.3, 1.3, 1], [7.7, 3.0, 6.1, 2.3, 2]])
    path = tmp_path / "iris.csv"
    path.write_text("3,4,a,b,c\n" + "".join(
        ",".join(f"{v:g}" for v in row[:4]) + f",{int(row[4])}\n" for row in rows))

    def decode(line):
        columns = tf.decode_csv(line, [[0.], [0.], [0.], [0.], [0]])
        return {"x": columns[:-1]}, columns[-1:]

    with tf.Graph().as_default():
        dataset = tf.data.TextLineDataset(str(path)).skip(1).map(decode).batch(2)
        features, labels = dataset.output_shapes
        assert features["x"].as_list() == [None, 4] and labels.as_list() == [None, 1]
        first, second = _elements(dataset, 2)
    np.testing.assert_allclose(first[0]["x"], rows[:2, :4].astype(np.float32))
    np.testing.assert_array_equal(first[1], rows[:2, 4:].astype(np.int32))
    np.testing.assert_allclose(second[0]["x"], rows[2:, :4].astype(np.float32))


def test_a_list_returned_at_the_top_is_a_tuple_of_components():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(3).map(lambda x: [x, x * 2])
        assert [s.as_list() for s in dataset.output_shapes] == [[], []]
        assert [tuple(e) for e in _elements(dataset, 3)] == [(0, 0), (1, 2), (2, 4)]


def test_a_list_inside_a_tuple_is_stacked():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(2).map(lambda x: (x, [x, x + 1, x + 2]))
        assert [s.as_list() for s in dataset.output_shapes] == [[], [3]]
        values = _elements(dataset, 2)
    np.testing.assert_array_equal(values[1][1], [1, 2, 3])


def test_contrib_data_has_the_file_readers():
    assert tf.contrib.data.TextLineDataset is tf.data.TextLineDataset
    assert tf.contrib.data.FixedLengthRecordDataset is tf.data.FixedLengthRecordDataset
