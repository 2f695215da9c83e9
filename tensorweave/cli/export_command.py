"""`tensorweave export --onnx OUT.onnx`: a trained inference graph as an ONNX model.

    tensorweave export --onnx model.onnx --saved-model EXPORT_DIR [--tag serve]
                       [--signature serving_default]
    tensorweave export --onnx model.onnx --checkpoint CKPT_PREFIX [--meta-graph CKPT.meta]
                       --inputs images=x:0 --outputs probs=Softmax:0

The graph the signature's outputs need is pruned, its variables frozen into constants, and
each op converted (framework/onnx_export); an op type without a rule fails naming it. The ONNX
model's inputs and outputs carry the signature's keys (or the keys given with key=tensor).
Needs the `onnx` package: pip install 'tensorweave[onnx]'.
"""
import os
import sys

from tensorweave.cli import signature_model


def add_parser(commands):
    export = commands.add_parser("export", help="convert a trained inference graph (SavedModel "
                                 "or checkpoint) to ONNX")
    export.add_argument("--onnx", required=True, metavar="OUT",
                        help="the .onnx file to write")
    source = export.add_mutually_exclusive_group(required=True)
    source.add_argument("--saved-model", metavar="DIR", help="a tf.saved_model export directory")
    source.add_argument("--checkpoint", metavar="PREFIX",
                        help="a checkpoint prefix (with --inputs and --outputs)")
    signature_model.add_saved_model_arguments(
        export, "SignatureDef key of the SavedModel (default: serving_default)")
    export.add_argument("--meta-graph", default=None,
                        help="the checkpoint's meta graph (default: PREFIX.meta)")
    export.add_argument("--inputs", default="",
                        help="with --checkpoint: comma-separated key=tensor_name inputs")
    export.add_argument("--outputs", default="",
                        help="with --checkpoint: comma-separated key=tensor_name outputs")
    return export


def load_model(args):
    """The SignatureModel the arguments name (a SavedModel or a checkpoint)."""
    model_class = signature_model.SignatureModel
    if args.saved_model:
        return model_class.from_saved_model(args.saved_model, tuple(args.tag or ["serve"]),
                                            args.signature)
    return model_class.from_checkpoint(args.checkpoint, _split(args.inputs),
                                       _split(args.outputs), args.meta_graph)


def _split(text):
    return [part.strip() for part in text.split(",") if part.strip()]


def _names(values):
    return ", ".join(value.name for value in values)


def run(args):
    from tensorweave.framework.onnx_export import UnsupportedOpError

    try:
        model = load_model(args)
    except (OSError, KeyError, ValueError, RuntimeError) as exc:
        print(f"tensorweave export: {exc}", file=sys.stderr)
        return 2
    try:
        proto = model.to_onnx()
    except (UnsupportedOpError, ImportError) as exc:
        print(f"tensorweave export: {exc}", file=sys.stderr)
        return 2
    finally:
        model.close()
    directory = os.path.dirname(os.path.abspath(args.onnx))
    os.makedirs(directory, exist_ok=True)
    temporary = args.onnx + ".tmp"
    with open(temporary, "wb") as handle:
        handle.write(proto.SerializeToString())
    os.replace(temporary, args.onnx)  # a reader never sees half a model
    print(f"tensorweave export: wrote {args.onnx} (ONNX opset "
          f"{proto.opset_import[0].version}, {len(proto.graph.node)} nodes; inputs "
          f"{_names(proto.graph.input)}; outputs {_names(proto.graph.output)})")
    return 0
