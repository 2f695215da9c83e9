"""`tf.data.experimental`: the names TF 1.x scripts use from it. Re-exports only."""
from tensorweave.data.dataset import AUTOTUNE  # noqa: F401
from tensorweave.data.iterator_ops import (get_output_types, get_output_shapes,  # noqa: F401
                                           get_output_classes)
from tensorweave.data.file_datasets import CsvDataset  # noqa: F401
from tensorweave.data.sampling import sample_from_datasets, choose_from_datasets  # noqa: F401
from tensorweave.data.experimental_ops import (Counter, RandomDataset,  # noqa: F401
                                               scan, take_while, unique, enumerate_dataset,
                                               unbatch, map_and_batch, shuffle_and_repeat,
                                               parallel_interleave, prefetch_to_device,
                                               copy_to_device, get_single_element)
from tensorweave.data.options import (ThreadingOptions, OptimizationOptions,  # noqa: F401
                                      DistributeOptions, AutoShardPolicy, ExternalStatePolicy,
                                      AutotuneOptions, AutotuneAlgorithm,
                                      MapVectorizationOptions)
from tensorweave.data.cardinality import (cardinality, assert_cardinality,  # noqa: F401
                                          INFINITE_CARDINALITY, UNKNOWN_CARDINALITY)
from tensorweave.data.grouping import (group_by_window, bucket_by_sequence_length,  # noqa: F401
                                       group_by_reducer, Reducer)
from tensorweave.data.element_ops import (ignore_errors, from_list,  # noqa: F401
                                          pad_to_cardinality, rejection_resample)
from tensorweave.data.specs import (get_structure, DatasetSpec, Structure,  # noqa: F401
                                    TensorStructure, DatasetStructure)
from tensorweave.data.lookup_tables import (DatasetInitializer, table_from_dataset,  # noqa: F401
                                            index_table_from_dataset)
from tensorweave.data.experimental_ops import (  # noqa: F401
    map_and_batch as map_and_batch_with_legacy_function)
from tensorweave.data.writers import TFRecordWriter, snapshot  # noqa: F401
from tensorweave.data.feature_readers import (make_csv_dataset,  # noqa: F401
                                              make_batched_features_dataset,
                                              parse_example_dataset)
from tensorweave.data.transformations import SHARD_HINT  # noqa: F401
from tensorweave.data.optional import (Optional, OptionalSpec,  # noqa: F401
                                       OptionalSpec as OptionalStructure, get_next_as_optional)
from tensorweave.data.sql_dataset import SqlDataset  # noqa: F401
from tensorweave.data.ragged_batching import (dense_to_ragged_batch,  # noqa: F401
                                              dense_to_sparse_batch)
from tensorweave.data.composite_specs import (RaggedTensorStructure,  # noqa: F401
                                              SparseTensorStructure, TensorArrayStructure)
from tensorweave.data.options import enable_debug_mode  # noqa: F401,E402
from tensorweave.data.iterator_saveable import make_saveable_from_iterator  # noqa: F401,E402
