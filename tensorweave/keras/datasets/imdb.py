"""`tf.keras.datasets.imdb`: Keras's IMDB reviews as word-index sequences, from the file Keras
caches (`~/.keras/datasets/imdb.npz`: x_train, y_train, x_test, y_test), downloaded there when
absent. The training and test sets are shuffled and prepared apart, with one seed, as Keras
does."""
import json

import numpy as np

from tensorweave.keras import utils
from tensorweave.keras.datasets import sequences as sequences_lib

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113,
              start_char=1, oov_char=2, index_from=3, **kwargs):
    if "nb_words" in kwargs:
        num_words = kwargs.pop("nb_words")
    if kwargs:
        raise TypeError(f"imdb.load_data: unrecognized keyword arguments {sorted(kwargs)}")
    with np.load(utils.get_file(path, ORIGIN + "imdb.npz"), allow_pickle=True) as archive:
        parts = [(archive["x_train"], archive["y_train"]),
                 (archive["x_test"], archive["y_test"])]
    prepared = []
    for xs, ys in parts:
        xs, ys = sequences_lib.prepare(xs, ys, seed, start_char, oov_char,
                                       index_from, skip_top, num_words, maxlen)
        prepared.append((sequences_lib.as_object_array(xs), ys))
    return prepared[0], prepared[1]


def get_word_index(path="imdb_word_index.json"):
    with open(utils.get_file(path, ORIGIN + "imdb_word_index.json")) as handle:
        return json.load(handle)
