"""`tf.keras.datasets.reuters`: Keras's Reuters newswires (46 topics) as word-index sequences,
from the cached `~/.keras/datasets/reuters.npz` (x, y), downloaded there when absent, then
split test_split of them off for testing, as Keras does."""
import json

import numpy as np

from tensorweave.keras import utils
from tensorweave.keras.datasets import sequences as sequences_lib

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2,
              seed=113, start_char=1, oov_char=2, index_from=3):
    with np.load(utils.get_file(path, ORIGIN + "reuters.npz"), allow_pickle=True) as archive:
        xs, labels = archive["x"], archive["y"]
    xs, labels = sequences_lib.prepare(xs, labels, seed, start_char, oov_char, index_from,
                                       skip_top, num_words, maxlen)
    split = int(len(xs) * (1 - test_split))
    xs = sequences_lib.as_object_array(xs)
    return (xs[:split], labels[:split]), (xs[split:], labels[split:])


def get_word_index(path="reuters_word_index.json"):
    with open(utils.get_file(path, ORIGIN + "reuters_word_index.json")) as handle:
        return json.load(handle)
