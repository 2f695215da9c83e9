"""`tensorflow.python`: the few internal TF 1.x modules that public programs import by path
(`from tensorflow.python.client import timeline, device_lib`). Re-exports only."""
