"""`tf.data` (L4): datasets, iterators and readers. This module only re-exports.

Loaders of particular datasets (mnist.py) live beside them; `tensorweave.datasets` re-exports
those.

Limits, by design:
- A dataset is a Python object. Iterator ops name it by a key in a process-wide registry
  (kernels/dataset.py), so a GraphDef holding a pipeline imports and runs anywhere in the process
  that built it, but not in another process: a remote worker builds its own pipeline (as each
  worker of between-graph replication does). Registered datasets live as long as the process;
  they reference the arrays they were given, they do not copy them.
- Iterator handles are strings naming a resource of this process; a handle from another process
  or of a collected session is a clear error.
- Functions given to map/filter/interleave are traced into their own graph: they cannot use
  tensors or variables of the graph that builds the pipeline. Functions that need concrete values
  run on NumPy arrays instead (functions.py), with outputs of known rank and unknown dimensions.
- Prefetch and parallel-map threads are daemons; a prefetch thread stops when its iterator is
  re-initialized or collected with its session. interleave and num_parallel_reads interleave
  deterministically but read sequentially.
- Elements are nests of dense tensors, except that dense_to_ragged_batch and
  dense_to_sparse_batch make RaggedTensor / SparseTensor elements, which travel as their
  components and can be iterated, repeated, taken, shuffled and prefetched, not re-batched or
  mapped (composite_specs.py); TensorArray elements are refused, and an Optional is a
  (has_value, components) pair rather than a variant tensor (optional.py).
- tf.data.Options are validated and merged as TF does; deterministic and
  threading.private_threadpool_size change how a parallel map runs, the performance-only
  options are accepted and not consulted (options.py says which).
- Not here: the tf.data service, variant conversion (to_variant / from_variant), eager-only
  debugging (enable_debug_mode, get_model_proto), and saving iterator state in checkpoints
  (make_saveable_from_iterator).
"""
from tensorweave.data.dataset import AUTOTUNE, Dataset  # noqa: F401
from tensorweave.data.iterator_ops import (Iterator, make_initializable_iterator,  # noqa: F401
                                           make_one_shot_iterator, get_output_types,
                                           get_output_shapes, get_output_classes)
from tensorweave.data.readers import TFRecordDataset  # noqa: F401
from tensorweave.data.file_datasets import TextLineDataset, FixedLengthRecordDataset  # noqa: F401
from tensorweave.data.structure import TensorSpec  # noqa: F401
from tensorweave.data import experimental  # noqa: F401
from tensorweave.data.options import Options, ThreadingOptions  # noqa: F401
from tensorweave.data.cardinality import (INFINITE_CARDINALITY,  # noqa: F401
                                          UNKNOWN_CARDINALITY)
from tensorweave.data.specs import DatasetSpec, NumpyIterator  # noqa: F401
