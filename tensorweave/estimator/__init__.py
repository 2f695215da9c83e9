"""`tf.estimator` (L5): Estimator, its specs and configuration, train_and_evaluate, the canned
estimators and the numpy input_fn. Re-exports only."""
from tensorweave.estimator.mode_keys import ModeKeys  # noqa: F401
from tensorweave.estimator.model_fn import EstimatorSpec  # noqa: F401
from tensorweave.estimator.run_config import RunConfig  # noqa: F401
from tensorweave.estimator.estimator import Estimator  # noqa: F401
from tensorweave.estimator.warm_starting import WarmStartSettings  # noqa: F401
from tensorweave.estimator import inputs  # noqa: F401
from tensorweave.train.session_run_hook import (SessionRunHook, SessionRunArgs,  # noqa: F401
                                                SessionRunContext, SessionRunValues)
from tensorweave.train.basic_session_run_hooks import (  # noqa: F401
    CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
    GlobalStepWaiterHook, LoggingTensorHook, NanLossDuringTrainingError, NanTensorHook,
    SecondOrStepTimer, StepCounterHook, StopAtStepHook, SummarySaverHook)
from tensorweave.estimator.exporter import (Exporter, FinalExporter,  # noqa: F401
                                            LatestExporter, BestExporter)
from tensorweave.estimator.training import TrainSpec, EvalSpec, train_and_evaluate  # noqa: F401
from tensorweave.estimator.canned import (LinearClassifier, LinearRegressor,  # noqa: F401
                                          DNNClassifier, DNNRegressor)
from tensorweave.estimator.canned import (DNNLinearCombinedClassifier,  # noqa: F401
                                          DNNLinearCombinedRegressor, BaselineClassifier,
                                          BaselineRegressor)
from tensorweave.estimator.extenders import add_metrics  # noqa: F401
from tensorweave.estimator import export  # noqa: F401
from tensorweave.feature_column.parse_spec import (  # noqa: F401
    classifier_parse_example_spec, regressor_parse_example_spec)
from tensorweave.estimator import contrib_learn as _contrib_learn  # noqa: F401,E402 - provides tf.contrib.learn
