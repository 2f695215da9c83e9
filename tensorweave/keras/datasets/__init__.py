"""`tf.keras.datasets`: re-exports."""
from tensorweave.keras.datasets import (boston_housing, fashion_mnist, imdb,  # noqa: F401
                                        mnist, reuters)
