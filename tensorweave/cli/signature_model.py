"""A trained model loaded into a tensorweave session, seen through one signature: named input
and output tensors, what `tensorweave export` converts and `tensorweave serve` answers with.

Two sources: a `tf.saved_model` export (a tag set and a SignatureDef key), or a checkpoint with
its meta graph and the input and output tensors named on the command line.
"""
import os

import numpy as np


def add_saved_model_arguments(parser, signature_help):
    """--tag and --signature, as `export` and `serve` both take them."""
    parser.add_argument("--tag", action="append", default=None,
                        help="SavedModel tag of the meta graph (repeatable; default: serve)")
    parser.add_argument("--signature", default="serving_default", help=signature_help)


class SignatureModel:
    """A session holding the model; `inputs`/`outputs` map signature keys to graph Tensors."""

    def __init__(self, session, inputs, outputs, method_name=""):
        if not outputs:
            raise ValueError("The signature has no outputs: nothing to compute")
        self.session = session
        self.graph = session.graph
        self.inputs = dict(inputs)
        self.outputs = dict(outputs)
        self.method_name = method_name

    @classmethod
    def from_saved_model(cls, export_dir, tags=("serve",), signature_key="serving_default"):
        signatures = load_saved_model_signatures(export_dir, tags)
        if signature_key not in signatures:
            next(iter(signatures.values())).close()
            raise ValueError(f"The SavedModel in {export_dir} has no signature "
                           f"{signature_key!r}; it has {sorted(signatures)}")
        return signatures[signature_key]

    @classmethod
    def from_checkpoint(cls, checkpoint, inputs, outputs, meta_graph=None):
        """`inputs`/`outputs`: ['key=tensor_name' or 'tensor_name', ...]; a bare name's key is
        its op name."""
        import tensorweave as tf
        from tensorweave.train.saver import import_meta_graph

        meta_graph = meta_graph or checkpoint + ".meta"
        if not os.path.exists(meta_graph):
            raise FileNotFoundError(f"No meta graph at {meta_graph}: give --meta-graph")
        graph = tf.Graph()
        session = tf.Session(graph=graph)
        try:
            with graph.as_default():
                saver = import_meta_graph(meta_graph)
                if saver is not None:
                    saver.restore(session, checkpoint)
            return cls(session, _named_tensors(graph, inputs, "--inputs"),
                       _named_tensors(graph, outputs, "--outputs"))
        except BaseException:
            session.close()
            raise

    def input_spec(self, key):
        """(dtype, shape list with None for unknown dims, or None for unknown rank)."""
        return _spec(self.inputs[key])

    def output_spec(self, key):
        return _spec(self.outputs[key])

    def run(self, feeds, output_keys=None):
        """{output key: array} for {input key: array}."""
        keys = list(output_keys or sorted(self.outputs))
        values = self.session.run([self.outputs[key] for key in keys],
                                  {self.inputs[key]: value for key, value in feeds.items()})
        return {key: np.asarray(value) for key, value in zip(keys, values)}

    def frozen_graph_def(self):
        """The inference sub-graph the outputs need, variables replaced by constants."""
        from tensorweave.framework.graph_util import convert_variables_to_constants

        names = sorted({tensor.op.name for tensor in self.outputs.values()})
        return convert_variables_to_constants(self.session, self.graph.as_graph_def(), names)

    def to_onnx(self):
        """The model as an onnx.ModelProto whose inputs and outputs carry the signature keys."""
        from tensorweave.framework.onnx_export import graph_def_to_onnx

        inputs = [(key, tensor.name) + self.input_spec(key)
                  for key, tensor in sorted(self.inputs.items())]
        outputs = [(key, tensor.name) + self.output_spec(key)
                   for key, tensor in sorted(self.outputs.items())]
        return graph_def_to_onnx(self.frozen_graph_def(), inputs, outputs)

    def close(self):
        self.session.close()


def load_saved_model_signatures(export_dir, tags=("serve",)):
    """{signature key: SignatureModel} of a SavedModel's meta graph, all in one session."""
    import tensorweave as tf
    from tensorweave.train.saved_model import loader

    if not loader.maybe_saved_model_directory(export_dir):
        raise FileNotFoundError(f"No SavedModel (saved_model.pb or saved_model.pbtxt) in "
                                f"{export_dir}")
    graph = tf.Graph()
    session = tf.Session(graph=graph)
    try:
        meta = loader.load(session, list(tags), export_dir)
        if not meta.signature_def:
            raise ValueError(f"The SavedModel in {export_dir} has no signatures")
        return {key: SignatureModel(session, *loader.signature_tensors(graph, signature),
                                    signature.method_name)
                for key, signature in sorted(meta.signature_def.items())}
    except BaseException:
        session.close()
        raise


def _spec(tensor):
    shape = tensor.shape
    return tensor.dtype, (shape.as_list() if shape.ndims is not None else None)


def _named_tensors(graph, specs, flag):
    if not specs:
        raise ValueError(f"{flag} names no tensors: give key=tensor_name (or tensor_name)")
    named = {}
    for spec in specs:
        key, sep, name = spec.partition("=")
        if not sep:
            key, name = spec.split(":")[0].split("/")[-1], spec
        name = name if ":" in name else name + ":0"
        try:
            named[key.strip()] = graph.get_tensor_by_name(name.strip())
        except (KeyError, ValueError) as exc:
            raise ValueError(f"{flag}: the graph has no tensor {name!r}") from exc
    return named
