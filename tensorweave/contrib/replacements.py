"""How `tf.contrib.<name>` resolves: a submodule of this package is imported on first use (so
that one can be added as a file, e.g. rnn.py, without touching the package); a contrib module
tensorweave does not provide fails with an AttributeError naming its TF 1.x core replacement
where one exists (never a silent None)."""
import importlib
import importlib.util
import pkgutil
import sys

# contrib module -> where TF 1.x moved it (None: no core replacement).
REPLACEMENTS = {
    "rnn": "tf.nn.rnn_cell (the cells) and tf.nn.dynamic_rnn / tf.nn.static_rnn",
    "cudnn_rnn": "tf.nn.rnn_cell",
    "grid_rnn": None,
    "recurrent": None,
    "bayesflow": None,
    "estimator": "tf.estimator",
    "lookup": "tf.lookup",
    "hooks": "tf.train's SessionRunHooks",
    "nn": "tf.nn",
    "signal": "tf.signal",
    "feature_column": "tf.feature_column",
    "saved_model": "tf.saved_model",
    "session_bundle": "tf.saved_model",
    "checkpoint": "tf.train.Saver / tf.train.Checkpoint",
    "cluster_resolver": "tf.train.TFConfigClusterResolver / tf.distribute.cluster_resolver",
    "all_reduce": "tensorweave.horovod or the replicator's all_reduce",
    "nccl": "tensorweave.horovod",
    "input_pipeline": "tf.data",
    "autograph": "tf.autograph",
    "proto": "tf.io.decode_proto / encode_proto",
    "text": None,
    "eager": None,
    "tpu": None,
    "lite": None,
    "compiler": None,
    "graph_editor": None,
    "quantize": None,
    "timeseries": None,
    "gan": None,
    "boosted_trees": None,
    "linear_optimizer": None,
    "kernel_methods": None,
    "labeled_tensor": None,
    "layers_tensorflow": None,
    "model_pruning": None,
    "mixed_precision": None,
    "memory_stats": None,
    "receptive_field": None,
    "resampler": None,
    "solvers": None,
    "sparsemax": None,
    "specs": None,
    "testing": "tf.test",
    "integrate": None,
    "copy_graph": None,
    "ffmpeg": None,
    "cloud": None,
    "bigtable": None,
    "kinesis": None,
    "batching": None,
    "periodic_resample": None,
    "reduce_slice_ops": None,
    "remote_fused_graph": None,
    "stat_summarizer": None,
    "constrained_optimization": None,
}


def available(package_name):
    """The submodules of the package (imported or not)."""
    package = sys.modules[package_name]
    return sorted(info.name for info in pkgutil.iter_modules(package.__path__)
                  if not info.name.startswith("_") and info.name != "replacements")


def resolve(package_name, name):
    """The package's attribute `name`: its submodule, imported now; else AttributeError."""
    if not name.startswith("_") and name != "replacements" and \
            importlib.util.find_spec(f"{package_name}.{name}") is not None:
        return importlib.import_module(f"{package_name}.{name}")  # also sets the attribute
    where = f"tf.contrib.{name}"
    if name in REPLACEMENTS:
        replacement = REPLACEMENTS[name]
        advice = f"use {replacement} instead" if replacement else \
            "it has no replacement in TF 1.x's core API"
        raise AttributeError(f"{where} is not provided by tensorweave: {advice}. tensorweave's "
                             f"tf.contrib has {', '.join(available(package_name))}.")
    raise AttributeError(f"module {package_name!r} has no attribute {name!r} ({where} is not a "
                         f"TF 1.x contrib module tensorweave knows; it provides "
                         f"{', '.join(available(package_name))}).")
