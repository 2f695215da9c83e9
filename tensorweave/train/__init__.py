"""`tf.train` (L4): optimizers, the global step and learning-rate schedules. Re-exports only."""
from tensorweave.train.optimizer import Optimizer  # noqa: F401
from tensorweave.train.gradient_descent import GradientDescentOptimizer  # noqa: F401
from tensorweave.train.momentum import MomentumOptimizer  # noqa: F401
from tensorweave.train.adam import AdamOptimizer  # noqa: F401
from tensorweave.train.adagrad import AdagradOptimizer  # noqa: F401
from tensorweave.train.rmsprop import RMSPropOptimizer  # noqa: F401
from tensorweave.train.coordinator import Coordinator  # noqa: F401
from tensorweave.train.queue_runner import (QueueRunner, add_queue_runner,  # noqa: F401
                                            start_queue_runners)
from tensorweave.train.training_util import (get_global_step, create_global_step,  # noqa: F401
                                             get_or_create_global_step, global_step,
                                             assert_global_step)
from tensorweave.train.learning_rate_decay import (exponential_decay,  # noqa: F401
                                                   piecewise_constant, inverse_time_decay,
                                                   polynomial_decay)
from tensorweave.framework.protos.example_pb2 import (Example, SequenceExample,  # noqa: F401
                                                      Features, Feature, FeatureList,
                                                      FeatureLists, BytesList, FloatList,
                                                      Int64List)
from tensorweave.train.server_lib import (ClusterSpec, Server, ClusterDef,  # noqa: F401
                                          ServerDef, JobDef, TFConfigClusterResolver)
from tensorweave.train.device_setter import (replica_device_setter,  # noqa: F401
                                             GreedyLoadBalancingStrategy, byte_size_load_fn)
from tensorweave.train.saver import Saver, SaverDef  # noqa: F401
from tensorweave.train.checkpoint_management import (latest_checkpoint,  # noqa: F401
                                                     get_checkpoint_state,
                                                     update_checkpoint_state,
                                                     checkpoint_exists, get_checkpoint_mtimes,
                                                     remove_checkpoint, CheckpointState,
                                                     list_variables, load_variable,
                                                     load_checkpoint, NewCheckpointReader)
from tensorweave.train.session_run_hook import (SessionRunHook, SessionRunArgs,  # noqa: F401
                                                SessionRunContext, SessionRunValues)
from tensorweave.train.basic_session_run_hooks import (  # noqa: F401
    SecondOrStepTimer, StopAtStepHook, CheckpointSaverHook, CheckpointSaverListener,
    StepCounterHook, LoggingTensorHook, NanTensorHook, NanLossDuringTrainingError,
    FinalOpsHook, FeedFnHook, GlobalStepWaiterHook, StopServersHook, SummarySaverHook)
from tensorweave.framework.event_file import summary_iterator  # noqa: F401
from tensorweave.train.session_manager import SessionManager  # noqa: F401
from tensorweave.train.scaffold import (Scaffold, SessionCreator,  # noqa: F401
                                        ChiefSessionCreator, WorkerSessionCreator)
from tensorweave.train.monitored_session import (MonitoredSession,  # noqa: F401
                                                 SingularMonitoredSession,
                                                 MonitoredTrainingSession, StepContext)
from tensorweave.train.sync_replicas_optimizer import SyncReplicasOptimizer  # noqa: F401
from tensorweave.train.input import (limit_epochs, input_producer,  # noqa: F401
                                     string_input_producer, range_input_producer,
                                     slice_input_producer, match_filenames_once)
from tensorweave.train.batching import (batch, shuffle_batch, batch_join,  # noqa: F401
                                        shuffle_batch_join, maybe_batch, maybe_shuffle_batch,
                                        maybe_batch_join, maybe_shuffle_batch_join)
from tensorweave.train.coordinator import LooperThread  # noqa: F401
from tensorweave.train.adadelta import AdadeltaOptimizer  # noqa: F401
from tensorweave.train.ftrl import FtrlOptimizer  # noqa: F401
from tensorweave.train.proximal import (ProximalGradientDescentOptimizer,  # noqa: F401
                                        ProximalAdagradOptimizer)
from tensorweave.train.adagrad_da import AdagradDAOptimizer  # noqa: F401
from tensorweave.train.learning_rate_decay import (natural_exp_decay, cosine_decay,  # noqa: F401
                                                   cosine_decay_restarts, linear_cosine_decay,
                                                   noisy_linear_cosine_decay,
                                                   piecewise_constant_decay)
from tensorweave.train.moving_averages import ExponentialMovingAverage  # noqa: F401
from tensorweave.train.saver import import_meta_graph  # noqa: F401
from tensorweave.train.meta_graph import export_meta_graph, write_graph  # noqa: F401
from tensorweave.train.supervisor import Supervisor, basic_train_loop  # noqa: F401
from tensorweave.train.checkpoint_management import generate_checkpoint_state_proto  # noqa: F401
from tensorweave.train.checkpoint_utils import (checkpoints_iterator,  # noqa: F401
                                                init_from_checkpoint)
from tensorweave.train.warm_starting import VocabInfo, warm_start  # noqa: F401
from tensorweave.train import experimental  # noqa: F401
from tensorweave.train.checkpoint import Checkpoint, CheckpointManager  # noqa: F401
from tensorweave.train.checkpoint_options import CheckpointOptions  # noqa: F401
from tensorweave.train.sdca import sdca_shrink_l1  # noqa: F401
from tensorweave.ops.sdca_ops import sdca_fprint, sdca_optimizer  # noqa: F401
from tensorweave.train.profiler_hook import ProfilerHook  # noqa: F401
