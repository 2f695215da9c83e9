"""`tf.keras.datasets.fashion_mnist`: Zalando's 28x28 clothing images in MNIST's IDX format,
from `~/.keras/datasets/fashion-mnist/` (the four .gz files Keras caches), downloaded there
when absent."""
from tensorweave.data import mnist as idx_mnist
from tensorweave.keras import utils

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def load_data():
    paths = {}
    for name in ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"):
        paths[name] = utils.get_file(name, ORIGIN + name,
                                     cache_subdir="datasets/fashion-mnist")
    return tuple((idx_mnist.read_idx_images(paths[f"{kind}-images-idx3-ubyte.gz"]),
                  idx_mnist.read_idx_labels(paths[f"{kind}-labels-idx1-ubyte.gz"]))
                 for kind in ("train", "t10k"))
