"""DataSet.next_batch asked for more examples than the set holds (a program's
`mnist.train.next_batch(10000)` on a smaller training split): as TF's tutorial loader, the rest
of the epoch followed by the next epoch's examples, as many as exist, never an error."""
import numpy as np

from tensorweave.data import mnist


def _numbered_set(count):
    images = np.arange(count * 4, dtype=np.float32).reshape(count, 4)
    return mnist.DataSet(images, np.arange(count), reshape=False)


def test_batch_larger_than_the_set_wraps_into_the_next_epoch():
    data = _numbered_set(5)
    images, labels = data.next_batch(8, shuffle=False)
    assert labels.tolist() == [0, 1, 2, 3, 4, 0, 1, 2]
    np.testing.assert_array_equal(images[:, 0], labels * 4)
    assert data.epochs_completed == 1
    assert data.next_batch(2, shuffle=False)[1].tolist() == [3, 4]


def test_batch_twice_the_set_gives_each_example_at_most_twice():
    data = _numbered_set(5)
    _, labels = data.next_batch(12, shuffle=True)
    assert len(labels) == 10 and np.bincount(labels).tolist() == [2] * 5
