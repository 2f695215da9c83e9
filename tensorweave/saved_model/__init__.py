"""`tf.saved_model` (TF 1.x): re-exports only; the SavedModel lives in train/saved_model/."""
from tensorweave.saved_model import (builder, constants, loader, main_op,  # noqa: F401
                                     signature_constants, signature_def_utils, tag_constants,
                                     utils)
from tensorweave.train.saved_model.builder import SavedModelBuilder as Builder  # noqa: F401
from tensorweave.train.saved_model.builder import simple_save  # noqa: F401
from tensorweave.train.saved_model.loader import load  # noqa: F401
from tensorweave.train.saved_model.loader import (  # noqa: F401
    maybe_saved_model_directory, maybe_saved_model_directory as contains_saved_model)
from tensorweave.train.saved_model.main_op import main_op_with_restore  # noqa: F401
from tensorweave.train.saved_model.signature_def_utils import (  # noqa: F401
    build_signature_def, build_tensor_info, classification_signature_def,
    get_tensor_from_tensor_info, is_valid_signature, predict_signature_def,
    regression_signature_def)
from tensorweave.train.saved_model.constants import (  # noqa: F401
    ASSETS_DIRECTORY, ASSETS_KEY, CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME, CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES, DEBUG_DIRECTORY, DEBUG_INFO_FILENAME_PB,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY, GPU, LEGACY_INIT_OP_KEY, MAIN_OP_KEY, PREDICT_INPUTS,
    PREDICT_METHOD_NAME, PREDICT_OUTPUTS, REGRESS_INPUTS, REGRESS_METHOD_NAME, REGRESS_OUTPUTS,
    SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT, SAVED_MODEL_SCHEMA_VERSION, SERVING, TPU,
    TRAINING, VARIABLES_DIRECTORY, VARIABLES_FILENAME)
from tensorweave.saved_model import experimental  # noqa: F401,E402
from tensorweave.train.saved_model.object_save import (Asset, SaveOptions,  # noqa: F401,E402
                                                       load_v2, save)
