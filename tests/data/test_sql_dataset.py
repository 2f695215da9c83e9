"""experimental.SqlDataset on a real SQLite file, against the rows inserted."""
import sqlite3

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import file_access

exp = tf.data.experimental
ROWS = [("ann", 31, 1.5, 1), ("bob", 42, -2.25, 0), ("cy", None, 3.0, 1)]


@pytest.fixture
def database(tmp_path):
    path = str(tmp_path / "people.sqlite")
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE people (name TEXT, age INTEGER, score REAL, ok INTEGER)")
    connection.executemany("INSERT INTO people VALUES (?, ?, ?, ?)", ROWS)
    connection.commit()
    connection.close()
    return path


def test_sql_dataset_reads_rows_as_typed_tuples(database):
    dataset = exp.SqlDataset("sqlite", database, "SELECT name, age, score, ok FROM people",
                             (tf.string, tf.int32, tf.float64, tf.bool))
    rows = list(dataset.as_numpy_iterator())
    assert [(bytes(n), int(a), float(s), bool(o)) for n, a, s, o in rows] == [
        (b"ann", 31, 1.5, True), (b"bob", 42, -2.25, False), (b"cy", 0, 3.0, True)]
    assert rows[0][1].dtype == np.int32


def test_sql_dataset_query_fed_in_a_session(database):
    with tf.Graph().as_default():
        query = tf.placeholder(tf.string, [])
        dataset = exp.SqlDataset("sqlite", database, query, (tf.int64,))
        iterator = tf.data.make_initializable_iterator(dataset)
        (age,) = iterator.get_next()
        with tf.Session() as sess:
            sess.run(iterator.initializer, {query: "SELECT age FROM people WHERE age > 35"})
            assert sess.run(age) == 42
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(age)


def test_sql_dataset_errors(database, tmp_path):
    with pytest.raises(ValueError, match="driver_name must be 'sqlite'"):
        exp.SqlDataset("mysql", database, "SELECT 1", (tf.int64,))
    with pytest.raises(TypeError, match="complex64"):
        exp.SqlDataset("sqlite", database, "SELECT 1", (tf.complex64,))
    columns = exp.SqlDataset("sqlite", database, "SELECT name, age FROM people", (tf.string,))
    with pytest.raises(tf.errors.InvalidArgumentError, match="2 columns"):
        list(columns.as_numpy_iterator())
    bad = exp.SqlDataset("sqlite", database, "SELECT nope FROM people", (tf.string,))
    with pytest.raises(tf.errors.InvalidArgumentError, match="query failed"):
        list(bad.as_numpy_iterator())
    text = exp.SqlDataset("sqlite", database, "SELECT name FROM people", (tf.int64,))
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot be read as int64"):
        list(text.as_numpy_iterator())
    owner = object()
    file_access.restrict(owner, [str(tmp_path / "elsewhere")])
    try:
        with pytest.raises(tf.errors.PermissionDeniedError, match="SqlDataset"):
            list(exp.SqlDataset("sqlite", database, "SELECT age FROM people",
                                (tf.int64,)).as_numpy_iterator())
    finally:
        file_access.release(owner)
