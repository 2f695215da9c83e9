"""tf.contrib.tensorboard.plugins.projector: the configuration file TensorBoard's embedding
projector reads, written into the summary writer's log directory."""
import os

import pytest
from google.protobuf import text_format

import tensorweave as tf


def test_visualize_embeddings_writes_the_projector_config(tmp_path):
    projector = tf.contrib.tensorboard.plugins.projector
    with tf.Graph().as_default():
        embedding_var = tf.Variable(tf.zeros([10, 4]), name="word_embedding")
        writer = tf.summary.FileWriter(str(tmp_path))
        config = projector.ProjectorConfig()
        embedding = config.embeddings.add()
        embedding.tensor_name = embedding_var.name
        embedding.metadata_path = "metadata.tsv"
        embedding.sprite.image_path = "sprite.png"
        embedding.sprite.single_image_dim.extend([28, 28])
        projector.visualize_embeddings(writer, config)
        writer.close()
    text = (tmp_path / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "word_embedding:0"' in text and "single_image_dim: 28" in text
    parsed = text_format.Parse(text, projector.ProjectorConfig())
    assert parsed == config
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".tmp-")]
    with pytest.raises(TypeError, match="needs a ProjectorConfig"):
        projector.visualize_embeddings(writer, {"embeddings": []})
