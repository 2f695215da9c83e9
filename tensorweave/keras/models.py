"""`tf.keras.models`: re-exports."""
from tensorweave.keras.engine.training import Model  # noqa: F401
from tensorweave.keras.engine.sequential import Sequential  # noqa: F401
from tensorweave.keras.engine.serialization import (save_model, load_model,  # noqa: F401
                                                    model_from_json, model_from_config,
                                                    model_from_yaml)
