"""`tf.keras.datasets.boston_housing`: 13 features and the median price of Boston suburbs,
from the cached `~/.keras/datasets/boston_housing.npz` (x, y), downloaded there when absent,
shuffled with `seed` and split as Keras does."""
import numpy as np

from tensorweave.keras import utils

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/boston_housing.npz"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    if not 0 <= test_split < 1:
        raise ValueError(f"test_split must be in [0, 1), got {test_split}")
    with np.load(utils.get_file(path, ORIGIN), allow_pickle=True) as archive:
        x, y = archive["x"], archive["y"]
    order = np.arange(len(x))
    np.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    split = int(len(x) * (1 - test_split))
    return (x[:split], y[:split]), (x[split:], y[split:])
