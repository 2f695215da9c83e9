"""`tensorflow.contrib.slim.python`: TF 1.x source path of slim (nets are imported from it)."""
