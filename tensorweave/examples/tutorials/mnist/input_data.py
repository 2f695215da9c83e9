"""`input_data.read_data_sets` as TF 1.x tutorials import it (re-exports)."""
from tensorweave.data.mnist import DataSet, Datasets, read_data_sets, dense_to_one_hot  # noqa: F401
