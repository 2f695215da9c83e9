"""`tf.contrib.tensorboard.plugins.projector`: tell TensorBoard's embedding projector which
checkpoint tensors to show (word2vec and MNIST tutorials do):

    config = projector.ProjectorConfig()
    embedding = config.embeddings.add()
    embedding.tensor_name = embedding_var.name
    embedding.metadata_path = "metadata.tsv"
    projector.visualize_embeddings(summary_writer, config)

writes projector_config.pbtxt (text protobuf, TensorBoard's field names) into the writer's log
directory, atomically (a temporary file renamed over the old one)."""
import os
import tempfile

from google.protobuf import text_format

from tensorweave.framework.protos.projector_config_pb2 import (EmbeddingInfo,  # noqa: F401
                                                               ProjectorConfig,
                                                               SpriteMetadata)

PROJECTOR_FILENAME = "projector_config.pbtxt"


def visualize_embeddings(summary_writer, config):
    """Writes `config` as the projector configuration of summary_writer's log directory."""
    if not isinstance(config, ProjectorConfig):
        raise TypeError(f"visualize_embeddings needs a ProjectorConfig, got "
                        f"{type(config).__name__}")
    logdir = summary_writer.get_logdir()
    if logdir is None:
        raise ValueError("visualize_embeddings: the summary writer has no log directory")
    os.makedirs(logdir, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".tmp-projector-", dir=logdir)
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text_format.MessageToString(config))
        os.replace(temporary, os.path.join(logdir, PROJECTOR_FILENAME))
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
