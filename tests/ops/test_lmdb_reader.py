"""tf.LMDBReader against databases written by the lmdb package (liblmdb): every (key, value)
in key order, across branch pages and overflow values, several files from one queue, an
empty database, and files it cannot read named."""
import numpy as np
import pytest

import tensorweave as tf

lmdb = pytest.importorskip("lmdb")

COVERED_OP_TYPES = {"LMDBReader"}


def write(directory, items):
    env = lmdb.open(str(directory), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for key, value in items.items():
            txn.put(key, value)
    env.close()
    return str(directory / "data.mdb")


def read_all(paths, batch=10000):
    queue = tf.FIFOQueue(len(paths) + 1, tf.string)
    reader = tf.LMDBReader()
    keys, values = reader.read_up_to(queue, batch)
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([paths]))
        sess.run(queue.close())
        got_keys, got_values = sess.run([keys, values])
        produced = sess.run(reader.num_records_produced())
    return list(got_keys), list(got_values), produced


def test_reads_every_record_in_key_order(tmp_path):
    rng = np.random.RandomState(0)
    big = {b"%05d" % i: rng.bytes(int(rng.randint(0, 9000))) for i in range(400)}
    small = {b"b": b"2", b"a": b"1", b"c": b""}
    first = write(tmp_path / "big", big)
    second = write(tmp_path / "small", small)
    keys, values, produced = read_all([first, second])
    assert keys == sorted(big) + [b"a", b"b", b"c"] and produced == 403
    assert values[:400] == [big[k] for k in sorted(big)]   # overflow pages included
    assert values[400:] == [b"1", b"2", b""]


def test_empty_database_and_bad_files(tmp_path):
    empty = write(tmp_path / "empty", {})
    other = write(tmp_path / "one", {b"k": b"v"})
    keys, values, _ = read_all([empty, other])
    assert keys == [b"k"] and values == [b"v"]
    junk = tmp_path / "junk.mdb"
    junk.write_bytes(b"\0" * 9000)
    with pytest.raises(tf.errors.DataLossError, match="not an LMDB data file"):
        read_all([str(junk)])
    with pytest.raises(tf.errors.NotFoundError):
        read_all([str(tmp_path / "missing.mdb")])
