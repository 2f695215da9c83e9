"""TensorFlow 1.x's own module paths (`tensorflow.python.*`, `tensorflow.core.*`), which many
TF 1.x programs import directly (`from tensorflow.python.framework import ops`,
`from tensorflow.python.client import device_lib`, `from tensorflow.python.platform import
gfile`, `from tensorflow.core.framework import summary_pb2`), answered by tensorweave.

Each path is made on first import from the tensorweave namespaces listed for it below (their
public names, first listed wins), so that `tensorflow.python.ops.math_ops.reduce_sum` is
`tf.reduce_sum`. A name tensorweave lacks is an AttributeError saying so. The finder answers
`<root>.python.*` and `<root>.core.*` for any root package that is tensorweave (imported as
`tensorweave`, or as `tensorflow` through an alias)."""
import importlib
import importlib.abc
import importlib.util
import sys

_TOP = "tensorweave"
_TRAIN = ("tensorweave.train",)
_KERAS = {"": "tensorweave.keras", "layers": "tensorweave.keras.layers",
          "models": "tensorweave.keras.models", "backend": "tensorweave.keras.backend",
          "optimizers": "tensorweave.keras.optimizers", "losses": "tensorweave.keras.losses",
          "metrics": "tensorweave.keras.metrics", "callbacks": "tensorweave.keras.callbacks",
          "utils": "tensorweave.keras.utils", "initializers": "tensorweave.keras.initializers",
          "regularizers": "tensorweave.keras.regularizers",
          "activations": "tensorweave.keras.activations",
          "preprocessing": "tensorweave.keras.preprocessing",
          "datasets": "tensorweave.keras.datasets", "engine": "tensorweave.keras.engine"}

# path under the root -> the tensorweave modules whose public names it has
MODULES = {
    "python.framework.ops": (_TOP, "tensorweave.framework.graph"),
    "python.framework.dtypes": ("tensorweave.dtypes", "tensorweave.framework.dtypes"),
    "python.framework.tensor_shape": ("tensorweave.framework.tensor_shape",),
    "python.framework.constant_op": ("tensorweave.framework.constant_op",),
    "python.framework.tensor_util": ("tensorweave.framework.tensor_util", _TOP),
    "python.framework.errors": ("tensorweave.errors",),
    "python.framework.errors_impl": ("tensorweave.errors",),
    "python.framework.graph_util": ("tensorweave.graph_util",),
    "python.framework.graph_util_impl": ("tensorweave.graph_util",),
    "python.framework.graph_io": ("tensorweave.train.meta_graph",),
    "python.framework.importer": (_TOP,),
    "python.framework.random_seed": ("tensorweave.framework.random_seed",),
    "python.framework.sparse_tensor": ("tensorweave.framework.sparse_tensor", _TOP),
    "python.framework.test_util": ("tensorweave.test",),
    "python.framework.versions": ("tensorweave.version",),
    "python.framework.meta_graph": ("tensorweave.train",),
    "python.ops.array_ops": (_TOP,),
    "python.ops.math_ops": ("tensorweave.math", _TOP),
    "python.ops.nn": ("tensorweave.nn",),
    "python.ops.nn_ops": ("tensorweave.nn",),
    "python.ops.nn_impl": ("tensorweave.nn",),
    "python.ops.rnn": ("tensorweave.nn",),
    "python.ops.rnn_cell": ("tensorweave.rnn_cell",),
    "python.ops.rnn_cell_impl": ("tensorweave.rnn_cell",),
    "python.ops.init_ops": ("tensorweave.ops.init_ops", _TOP),
    "python.ops.variable_scope": ("tensorweave.ops.variable_scope", _TOP),
    "python.ops.variables": ("tensorweave.ops.variables", _TOP),
    "python.ops.resource_variable_ops": ("tensorweave.ops.variables", _TOP),
    "python.ops.state_ops": (_TOP,),
    "python.ops.control_flow_ops": (_TOP,),
    "python.ops.data_flow_ops": ("tensorweave.queue", "tensorweave.ops.staging_ops", _TOP),
    "python.ops.random_ops": ("tensorweave.random", _TOP),
    "python.ops.clip_ops": (_TOP,),
    "python.ops.embedding_ops": ("tensorweave.nn",),
    "python.ops.check_ops": ("tensorweave.debugging", _TOP),
    "python.ops.sparse_ops": ("tensorweave.sparse", _TOP),
    "python.ops.string_ops": ("tensorweave.strings", _TOP),
    "python.ops.image_ops": ("tensorweave.image",),
    "python.ops.functional_ops": (_TOP,),
    "python.ops.tensor_array_ops": (_TOP,),
    "python.ops.gradients": (_TOP,),
    "python.ops.gradients_impl": (_TOP,),
    "python.ops.losses.losses": ("tensorweave.losses",),
    "python.ops.losses.losses_impl": ("tensorweave.losses",),
    "python.ops.metrics": ("tensorweave.metrics",),
    "python.ops.partitioned_variables": (_TOP,),
    "python.ops.logging_ops": (_TOP,),
    "python.ops.template": (_TOP,),
    "python.ops.lookup_ops": ("tensorweave.lookup", "tensorweave.ops.lookup_ops"),
    "python.ops.io_ops": ("tensorweave.io", _TOP),
    "python.ops.parsing_ops": ("tensorweave.io", _TOP),
    "python.ops.special_math_ops": ("tensorweave.math", _TOP),
    "python.ops.linalg_ops": ("tensorweave.linalg", _TOP),
    "python.ops.histogram_ops": (_TOP,),
    "python.ops.summary_ops": ("tensorweave.summary",),
    "python.ops.resources": ("tensorweave.ops.resources",),
    "python.ops.distributions.distributions": ("tensorweave.distributions",),
    "python.platform.gfile": ("tensorweave.gfile",),
    "python.platform.tf_logging": ("tensorweave.logging",),
    "python.platform.app": ("tensorweave.app",),
    "python.platform.flags": ("tensorweave.flags",),
    "python.platform.test": ("tensorweave.test",),
    "python.platform.googletest": ("tensorweave.test",),
    "python.platform.resource_loader": ("tensorweave.resource_loader",),
    "python.training.training": _TRAIN,
    "python.training.moving_averages": ("tensorweave.train.moving_averages",) + _TRAIN,
    "python.summary.summary": ("tensorweave.summary",),
    "python.summary.writer.writer": ("tensorweave.summary",),
    "python.summary.summary_iterator": ("tensorweave.train",),
    "python.client.session": (_TOP,),
    "python.client.timeline": ("tensorweave.timeline",),
    "python.client.device_lib": ("tensorweave.compat.source_path_tools",),
    "python.tools.inspect_checkpoint": ("tensorweave.compat.source_path_tools",),
    "python.tools.freeze_graph": ("tensorweave.compat.source_path_tools",),
    "python.lib.io.file_io": ("tensorweave.compat.file_io",),
    "python.lib.io.tf_record": ("tensorweave.python_io",),
    "python.util.nest": ("tensorweave.nest", "tensorweave.framework.nest"),
    "python.util.compat": ("tensorweave.compat",),
    "python.eager.context": (_TOP,),
    "python.layers.base": ("tensorweave.layers",),
    "python.layers.core": ("tensorweave.layers",),
    "python.layers.convolutional": ("tensorweave.layers",),
    "python.layers.pooling": ("tensorweave.layers",),
    "python.layers.normalization": ("tensorweave.layers",),
    "python.layers.layers": ("tensorweave.layers",),
    "python.saved_model.builder": ("tensorweave.saved_model.builder",),
    "python.saved_model.loader": ("tensorweave.saved_model.loader",),
    "python.saved_model.tag_constants": ("tensorweave.saved_model.tag_constants",),
    "python.saved_model.signature_constants": ("tensorweave.saved_model.signature_constants",),
    "python.saved_model.signature_def_utils": ("tensorweave.saved_model.signature_def_utils",),
    "python.saved_model.utils": ("tensorweave.saved_model.utils",),
    "python.saved_model.simple_save": ("tensorweave.saved_model",),
    "python.saved_model.saved_model": ("tensorweave.saved_model",),
    "python.data.ops.dataset_ops": ("tensorweave.data",),
    "python.data.ops.iterator_ops": ("tensorweave.data",),
    "python.data.ops.readers": ("tensorweave.data",),
    "python.estimator.estimator": ("tensorweave.estimator",),
    "python.estimator.model_fn": ("tensorweave.estimator",),
    "python.estimator.run_config": ("tensorweave.estimator",),
    "python.estimator.training": ("tensorweave.estimator",),
    "python.estimator.estimator_lib": ("tensorweave.estimator",),
    "core.framework.graph_pb2": ("tensorweave.framework.protos.graph_pb2",),
    "core.framework.node_def_pb2": ("tensorweave.framework.protos.graph_pb2",),
    "core.framework.attr_value_pb2": ("tensorweave.framework.protos.graph_pb2",),
    "core.framework.tensor_pb2": ("tensorweave.framework.protos.graph_pb2",),
    "core.framework.tensor_shape_pb2": ("tensorweave.framework.protos.graph_pb2",),
    "core.framework.summary_pb2": ("tensorweave.framework.protos.summary_pb2",),
    "core.framework.step_stats_pb2": ("tensorweave.framework.protos.summary_pb2",),
    "core.util.event_pb2": ("tensorweave.framework.protos.summary_pb2",),
    "core.protobuf.meta_graph_pb2": ("tensorweave.framework.protos.meta_graph_pb2",),
    "core.protobuf.saver_pb2": ("tensorweave.framework.protos.meta_graph_pb2",),
    "core.protobuf.saved_model_pb2": ("tensorweave.framework.protos.meta_graph_pb2",),
    "core.protobuf.config_pb2": ("tensorweave.runtime.config",
                                 "tensorweave.framework.protos.summary_pb2"),
    "core.example.example_pb2": ("tensorweave.framework.protos.example_pb2",),
    "core.example.feature_pb2": ("tensorweave.framework.protos.example_pb2",),
}
for _name in ("training_util", "saver", "optimizer", "adam", "gradient_descent", "momentum",
              "rmsprop", "adagrad", "adadelta", "ftrl", "proximal_adagrad",
              "proximal_gradient_descent", "learning_rate_decay", "session_run_hook",
              "basic_session_run_hooks", "monitored_session", "coordinator", "queue_runner",
              "queue_runner_impl", "input", "sync_replicas_optimizer", "server_lib",
              "device_setter", "supervisor", "checkpoint_utils", "checkpoint_management",
              "session_manager", "evaluation"):
    MODULES[f"python.training.{_name}"] = _TRAIN
for _sub, _target in _KERAS.items():
    MODULES["python.keras" + (f".{_sub}" if _sub else "")] = (_target,)
PACKAGES = {path.rsplit(".", i)[0] for path in MODULES
            for i in range(1, path.count(".") + 1)} | {"python", "core"}


def _root_is_tensorweave(root):
    module = sys.modules.get(root)
    return module is not None and getattr(module, "_TENSORWEAVE_ROOT", False)


def key_of(fullname):
    """'python.ops.math_ops' for '<root>.python.ops.math_ops' under a tensorweave root."""
    root, _, rest = fullname.partition(".")
    if not rest or rest.split(".")[0] not in ("python", "core"):
        return None
    if rest not in MODULES and rest not in PACKAGES:
        return None
    return rest if _root_is_tensorweave(root) else None


def fill(module, key):
    """Gives `module` the public names of the namespaces listed for `key`."""
    for source in MODULES.get(key, ()):
        namespace = importlib.import_module(source)
        for name in dir(namespace):
            if not name.startswith("_") and name not in module.__dict__:
                module.__dict__[name] = getattr(namespace, name)

    def missing(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"tensorflow.{key}.{name} is not provided by tensorweave (this "
                             f"path answers with {', '.join(MODULES.get(key, ())) or 'its submodules'})")
    module.__getattr__ = missing


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        key = key_of(fullname)
        if key is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=key in PACKAGES)

    def create_module(self, spec):
        if spec.name.split(".")[0] != _TOP:    # an alias root: the same module object
            return importlib.import_module(f"{_TOP}.{key_of(spec.name)}")
        return None

    def exec_module(self, module):
        key = key_of(module.__name__) if module.__name__.split(".")[0] == _TOP else None
        if key is not None and "__getattr__" not in module.__dict__:
            if key in PACKAGES:
                module.__path__ = []
            fill(module, key)


_FINDER = _Finder()


def install():
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
