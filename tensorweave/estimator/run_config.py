"""`tf.estimator.RunConfig`: how an Estimator runs, and where in a cluster (from TF_CONFIG).

With no cluster in TF_CONFIG the estimator runs alone: master '', chief, one worker, no ps.
With a cluster (TF 1.x's convention: exactly one "chief" task, or the legacy "master", with
"worker" and "ps" jobs; an "evaluator" task outside the cluster) the task type and index say
what this process is:
  chief / worker / ps   master = grpc://<own address> ('' if the cluster is this one task;
                        TF_CONFIG's "session_master" overrides); num_ps_replicas = #ps;
                        num_worker_replicas = #chief + #worker; only the chief is_chief;
                        global_id_in_cluster: chief 0, the other jobs by name, ps last
  evaluator             runs alone (master '', cluster_spec empty, evaluation_master from
                        TF_CONFIG's "eval_session_master"), evaluating the chief's checkpoints.
Properties are read-only; `replace(**changes)` returns a changed copy.
"""
import copy
import inspect
import json
import os

from tensorweave.distribute import strategy as distribute_strategy
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.platform import tf_logging as logging
from tensorweave.runtime import config as config_lib

_USE_DEFAULT = object()
_DEFAULT_SAVE_CHECKPOINTS_SECS = 600
_REPLACEABLE = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
                "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute",
                "device_fn", "protocol", "eval_distribute", "experimental_distribute",
                "experimental_max_worker_delay_secs", "session_creation_timeout_secs")


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _read_tf_config():
    raw = os.environ.get("TF_CONFIG", "")
    try:
        config = json.loads(raw) if raw else {}
    except ValueError as exc:
        raise ValueError(f"TF_CONFIG is not valid JSON ({exc}): {raw[:200]!r}") from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object, got {raw[:200]!r}")
    return config


def _validate(name, value):
    """TF's checks of one RunConfig property (None is always allowed)."""
    if value is None:
        return
    if name == "model_dir" and not str(value):
        raise ValueError("RunConfig: model_dir should be non-empty")
    if name in ("save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
                "keep_checkpoint_max", "log_step_count_steps",
                "experimental_max_worker_delay_secs") and \
            (not isinstance(value, (int, float)) or value < 0):
        raise ValueError(f"RunConfig: {name} should be >= 0, got {value!r}")
    if name == "keep_checkpoint_every_n_hours" and \
            (not isinstance(value, (int, float)) or value <= 0):
        raise ValueError(f"RunConfig: keep_checkpoint_every_n_hours should be > 0, got {value!r}")
    if name == "tf_random_seed" and (not isinstance(value, int) or isinstance(value, bool)):
        raise ValueError(f"RunConfig: tf_random_seed must be integer, got {value!r}")
    if name == "session_config" and not isinstance(value, config_lib.ConfigProto):
        raise ValueError(f"RunConfig: session_config must be instance of ConfigProto, got "
                         f"{value!r}")
    if name == "device_fn" and (not callable(value) or
                                list(inspect.signature(value).parameters) != ["op"]):
        raise ValueError('RunConfig: device_fn must be callable with exactly one argument "op".')
    if name in ("train_distribute", "eval_distribute") and \
            not isinstance(value, distribute_strategy.Strategy):
        raise ValueError(f"RunConfig: {name} must be a tf.distribute strategy (e.g. "
                         f"tf.distribute.MirroredStrategy()), got {type(value).__name__}")
    if name == "experimental_distribute":
        raise ValueError("RunConfig: experimental_distribute (DistributeConfig) is not "
                         "supported; pass the strategy as train_distribute")
    if name == "protocol" and value != "grpc":
        raise ValueError(f"RunConfig: protocol must be None or 'grpc', got {value!r}")


class RunConfig:
    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, _DEFAULT_SAVE_CHECKPOINTS_SECS
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("RunConfig: cannot specify both save_checkpoints_steps and "
                             "save_checkpoints_secs; set the other to None")
        arguments = dict(model_dir=model_dir, tf_random_seed=tf_random_seed,
                         save_summary_steps=save_summary_steps,
                         save_checkpoints_steps=save_checkpoints_steps,
                         save_checkpoints_secs=save_checkpoints_secs,
                         session_config=session_config, keep_checkpoint_max=keep_checkpoint_max,
                         keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                         log_step_count_steps=log_step_count_steps,
                         train_distribute=train_distribute, device_fn=device_fn,
                         protocol=protocol, eval_distribute=eval_distribute,
                         experimental_distribute=experimental_distribute,
                         experimental_max_worker_delay_secs=experimental_max_worker_delay_secs)
        for name, value in arguments.items():
            _validate(name, value)
        tf_config = _read_tf_config()
        env_dir = tf_config.get("model_dir")
        if env_dir is not None and not env_dir:
            raise ValueError("RunConfig: model_dir in TF_CONFIG should be non-empty")
        if env_dir and model_dir and os.path.normpath(str(env_dir)) != \
                os.path.normpath(str(model_dir)):
            raise ValueError(f"RunConfig: `model_dir` provided in RunConfig construct, if set, "
                             f"must have the same value as the model_dir in TF_CONFIG. "
                             f"model_dir: {model_dir!r}, TF_CONFIG's: {env_dir!r}")
        self._model_dir = str(model_dir or env_dir) if (model_dir or env_dir) else None
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._device_fn = device_fn
        self._protocol = protocol
        self._train_distribute, self._eval_distribute = train_distribute, eval_distribute
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._init_cluster(tf_config)

    # --- the cluster --------------------------------------------------------------------------
    def _init_cluster(self, tf_config):
        cluster = tf_config.get("cluster") or {}
        task = tf_config.get("task") or {}
        service = tf_config.get("service")
        if service is not None and not isinstance(service, dict):
            raise TypeError(f'If "service" is set in TF_CONFIG, it must be a dict. Given '
                            f"{type(service).__name__}")
        self._service = service
        self._cluster_spec = ClusterSpec(cluster)
        session_master = tf_config.get("session_master", "")
        eval_master = tf_config.get("eval_session_master", "")
        task_type = task.get("type")
        task_id = task.get("index")
        if not cluster:
            if (task_type or TaskType.WORKER) != TaskType.WORKER:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be '
                                 f"WORKER, got {task_type!r}.")
            if int(task_id or 0) != 0:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0, '
                                 f"got {task_id}.")
            self._set_roles(TaskType.WORKER, 0, session_master, eval_master, True, 0, 1, 0)
            return
        if not task_type:
            raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
        if task_id is None:
            raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
        task_id = int(task_id)
        if task_id < 0:
            raise ValueError(f"Task index must be non-negative number, got {task_id}.")
        jobs = self._cluster_spec.jobs
        chief_job = TaskType.MASTER if TaskType.MASTER in jobs else TaskType.CHIEF
        if chief_job == TaskType.MASTER and TaskType.CHIEF in jobs:
            raise ValueError("If `master` node exists in `cluster`, job `chief` is not "
                             "supported.")
        if chief_job not in jobs:
            raise ValueError('If "cluster" is set in TF_CONFIG, it must have one "chief" node '
                             "(the worker that initialises and checkpoints), e.g. "
                             "{'chief': ['host:port'], 'worker': [...], 'ps': [...]}")
        if self._cluster_spec.num_tasks(chief_job) != 1:
            raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief_job}" '
                             "node.")
        if task_type == TaskType.EVALUATOR:
            if chief_job == TaskType.MASTER:
                raise ValueError("If `master` node exists in `cluster`, task_type `evaluator` "
                                 "is not supported.")
            # The evaluator is not part of the training cluster: it runs alone.
            self._cluster_spec = ClusterSpec({})
            self._set_roles(task_type, task_id, session_master, eval_master, False, 0, 0,
                            None)
            return
        if eval_master:
            raise ValueError("Key `eval_session_master` should not be set for task type other "
                             "than evaluator (the evaluator's master).")
        if task_type not in jobs:
            raise ValueError(f"{task_type!r} is not a valid task_type in the cluster "
                             f"{sorted(jobs)}.")
        if task_id >= self._cluster_spec.num_tasks(task_type):
            raise ValueError(f"{task_id} is not a valid task_id for task_type {task_type!r} "
                             f"({self._cluster_spec.num_tasks(task_type)} tasks).")
        tasks = sum(self._cluster_spec.num_tasks(job) for job in jobs)
        # One task alone trains in-process (no server needed), as in TF.
        master = session_master or ("" if tasks == 1 else
                                    "grpc://" + self._cluster_spec.task_address(task_type,
                                                                                task_id))
        workers = self._count(chief_job) + self._count(TaskType.WORKER)
        self._set_roles(task_type, task_id, master, "", task_type == chief_job,
                        self._count(TaskType.PS), workers,
                        self._global_id(chief_job, task_type, task_id))

    def _set_roles(self, task_type, task_id, master, evaluation_master, is_chief, num_ps,
                   num_workers, global_id):
        self._task_type, self._task_id = task_type, task_id
        self._master, self._evaluation_master = master, evaluation_master
        self._is_chief = is_chief
        self._num_ps_replicas, self._num_worker_replicas = num_ps, num_workers
        self._global_id_in_cluster = global_id

    def _count(self, job):
        return self._cluster_spec.num_tasks(job) if job in self._cluster_spec.jobs else 0

    def _global_id(self, chief_job, task_type, task_id):
        """The chief first, then the other jobs by name, the ps tasks last (TF's order)."""
        others = sorted(job for job in self._cluster_spec.jobs
                        if job not in (chief_job, TaskType.PS, TaskType.EVALUATOR))
        offset = 0
        for job in [chief_job] + others + [TaskType.PS]:
            if job == task_type:
                return offset + task_id
            offset += self._count(job)
        return None

    # --- read-only properties -----------------------------------------------------------------
    cluster_spec = property(lambda self: self._cluster_spec)
    task_type = property(lambda self: self._task_type)
    task_id = property(lambda self: self._task_id)
    master = property(lambda self: self._master)
    evaluation_master = property(lambda self: self._evaluation_master)
    is_chief = property(lambda self: self._is_chief)
    num_ps_replicas = property(lambda self: self._num_ps_replicas)
    num_worker_replicas = property(lambda self: self._num_worker_replicas)
    global_id_in_cluster = property(lambda self: self._global_id_in_cluster)
    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    device_fn = property(lambda self: self._device_fn)
    protocol = property(lambda self: self._protocol)
    train_distribute = property(lambda self: self._train_distribute)
    eval_distribute = property(lambda self: self._eval_distribute)
    experimental_max_worker_delay_secs = property(
        lambda self: self._experimental_max_worker_delay_secs)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    service = property(lambda self: self._service)

    def replace(self, **kwargs):
        """A copy with the given properties changed (only the constructor's arguments)."""
        for key in kwargs:
            if key not in _REPLACEABLE:
                raise ValueError(f"Replacing {key} is not supported; the properties that can "
                                 f"be replaced: {', '.join(_REPLACEABLE)}")
        steps = kwargs.get("save_checkpoints_steps", self._save_checkpoints_steps)
        secs = kwargs.get("save_checkpoints_secs", self._save_checkpoints_secs)
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs and \
                steps is not None:
            secs = None
        elif "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs and \
                secs is not None:
            steps = None
        if steps is not None and secs is not None:
            raise ValueError("RunConfig.replace: cannot have both save_checkpoints_steps and "
                             "save_checkpoints_secs")
        new = copy.copy(self)
        for key, value in kwargs.items():
            _validate(key, value)
            setattr(new, "_" + key, value)
        new._save_checkpoints_steps, new._save_checkpoints_secs = steps, secs
        if "model_dir" in kwargs and kwargs["model_dir"] is not None:
            new._model_dir = str(kwargs["model_dir"])
        logging.debug("RunConfig.replace(%s)", sorted(kwargs))
        return new

    def __repr__(self):
        return (f"RunConfig(model_dir={self._model_dir!r}, task_type={self._task_type!r}, "
                f"task_id={self._task_id}, master={self._master!r}, is_chief={self._is_chief}, "
                f"num_ps_replicas={self._num_ps_replicas}, "
                f"num_worker_replicas={self._num_worker_replicas})")
