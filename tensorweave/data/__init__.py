"""`tf.data` (L4): datasets, iterators and readers. This module only re-exports.

Loaders of particular datasets (mnist.py) live beside them; `tensorweave.datasets` re-exports
those.
"""
from tensorweave.data.dataset import AUTOTUNE, Dataset  # noqa: F401
from tensorweave.data.iterator_ops import (Iterator, make_initializable_iterator,  # noqa: F401
                                           make_one_shot_iterator, get_output_types,
                                           get_output_shapes, get_output_classes)
from tensorweave.data.readers import TFRecordDataset  # noqa: F401
from tensorweave.data.structure import TensorSpec  # noqa: F401
from tensorweave.data import experimental  # noqa: F401
