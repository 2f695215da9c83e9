"""`tf.saved_model.signature_def_utils`: re-exports only."""
from tensorweave.train.saved_model.signature_def_utils import (  # noqa: F401
    build_signature_def, classification_signature_def, is_valid_signature,
    predict_signature_def, regression_signature_def)
from tensorweave.train.saved_model.method_name_updater import MethodNameUpdater  # noqa: F401
