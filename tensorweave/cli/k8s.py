"""`tensorweave k8s`: Kubernetes manifests for a cluster job, written as YAML.

    tensorweave k8s --ps 2 --workers 4 --image IMG -- python train.py        (PS, TF_CONFIG)
    tensorweave k8s --allreduce -np 4 --image IMG -- python train_hvd.py     (allreduce)
    tensorweave k8s ... -o DIR        (one file per object instead of stdout)
    kubectl apply -f DIR

Parameter-server mode, as `tensorweave launch` does it locally, but one pod per task:
  - a headless Service per task (`NAME-worker-3`), selecting exactly that task's pod, so the
    task's address in TF_CONFIG is `NAME-worker-3:PORT` whatever pod IP it gets;
  - the ps tasks are a StatefulSet (servers that run until deleted, restarted with the same
    identity) with a headless governing Service `NAME-ps`; the workers (and `--chief`) are an
    Indexed Job per role, which completes when every worker has exited 0;
  - every pod gets TF_CONFIG naming the whole cluster and its own task: the index is the
    pod's (the StatefulSet ordinal label, the Job's completion index annotation), put into
    TF_CONFIG by Kubernetes' `$(VAR)` expansion of an earlier variable of the container;
  - a Secret holding the job's auth token (TENSORWEAVE_AUTH_TOKEN in every pod: the servers
    refuse calls without it, as in a local launch);
  - CPU and memory requests (and equal limits, so each task is placed where it fits).
Allreduce mode: an Indexed Job of N pods, each running the command as one rank with the
variables `tensorweave run` gives a local rank (TENSORWEAVE_RANK from the pod's index,
TENSORWEAVE_SIZE, TENSORWEAVE_COORDINATOR naming rank 0's Service, TENSORWEAVE_JOB_TOKEN from
the Secret); rank 0 opens the coordinator there and the others connect through the Service.

The index labels and annotations used (apps.kubernetes.io/pod-index,
batch.kubernetes.io/job-completion-index) need Kubernetes 1.28 or later.
"""
import argparse
import json
import os
import re
import secrets
import sys

from tensorweave.cli import run_command

DEFAULT_PORT = 2222
_JOB_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
_STATEFUL_INDEX = "metadata.labels['apps.kubernetes.io/pod-index']"
_TOKEN_KEY = "token"
_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def _check(num_ps, num_workers, image, command, name, allreduce):
    if not image:
        raise ValueError("--image: give the container image that holds tensorweave and the "
                         "training script")
    if not command:
        raise ValueError("Give the command every pod runs after '--'")
    if not _NAME.match(name) or len(name) > 40:
        raise ValueError(f"--name {name!r}: Kubernetes names are lower-case letters, digits "
                         "and '-', start with a letter, and (with the task suffix) must stay "
                         "under 63 characters: use at most 40")
    if allreduce:
        if num_workers < 1:
            raise ValueError("-np must be at least 1")
    elif num_workers < 1:
        raise ValueError("--workers must be at least 1")
    if num_ps < 0:
        raise ValueError("--ps cannot be negative")


def _metadata(name, app, namespace, **labels):
    meta = {"name": name, "labels": dict({"app.kubernetes.io/name": app}, **labels)}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _headless_service(name, app, namespace, selector, port, role):
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": _metadata(name, app, namespace, **{"tensorweave/role": role}),
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": selector,
                     "ports": [{"name": "tensorweave", "port": port, "targetPort": port}]}}


def _token_secret(name, app, namespace, token):
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": _metadata(name, app, namespace), "type": "Opaque",
            "stringData": {_TOKEN_KEY: token}}


def _container(image, command, env, port, cpu, memory):
    resources = {"cpu": str(cpu), "memory": str(memory)}
    return {"name": "tensorweave", "image": image, "command": list(command[:1]),
            "args": list(command[1:]), "env": env,
            "ports": [{"name": "tensorweave", "containerPort": port}],
            "resources": {"requests": dict(resources), "limits": dict(resources)}}


def _index_env(name, field_path):
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


def _secret_env(name, secret):
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": _TOKEN_KEY}}}


def _pod_template(app, role, labels, container, restart_policy):
    return {"metadata": {"labels": dict({"app.kubernetes.io/name": app,
                                         "tensorweave/role": role}, **labels)},
            "spec": {"restartPolicy": restart_policy,
                     "enableServiceLinks": False, "containers": [container]}}


def _indexed_job(name, app, namespace, role, count, container):
    template = _pod_template(app, role, {}, container, "Never")
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": _metadata(name, app, namespace, **{"tensorweave/role": role}),
            "spec": {"completionMode": "Indexed", "completions": count, "parallelism": count,
                     "backoffLimit": 0, "template": template}}


def _stateful_set(name, app, namespace, role, count, container, service):
    labels = {"app.kubernetes.io/name": app, "tensorweave/role": role}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": _metadata(name, app, namespace, **{"tensorweave/role": role}),
            "spec": {"serviceName": service, "replicas": count,
                     "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": labels},
                     "template": _pod_template(app, role, {}, container, "Always")}}


def _task_selector(app, role, kind, index, set_name):
    if kind == "StatefulSet":
        return {"statefulset.kubernetes.io/pod-name": f"{set_name}-{index}"}
    return {"app.kubernetes.io/name": app, "tensorweave/role": role,
            "batch.kubernetes.io/job-completion-index": str(index)}


def ps_manifests(num_ps, num_workers, image, command, name="tensorweave", namespace=None,
                 port=DEFAULT_PORT, chief=False, cpu="1", memory="1Gi", token=None):
    """The objects (dicts) of a parameter-server job; see the module docstring."""
    _check(num_ps, num_workers, image, command, name, allreduce=False)
    roles = [("ps", num_ps, "StatefulSet")] if num_ps else []
    roles += [("chief", 1, "Job")] if chief else []
    roles += [("worker", num_workers, "Job")]
    cluster = {role: [f"{name}-{role}-{i}:{port}" for i in range(count)]
               for role, count, _ in roles}
    secret = f"{name}-token"
    objects = [_token_secret(secret, name, namespace, token or secrets.token_hex(16))]
    for role, count, kind in roles:
        set_name = f"{name}-{role}"
        for index in range(count):
            selector = _task_selector(name, role, kind, index, set_name)
            objects.append(_headless_service(f"{name}-{role}-{index}", name, namespace,
                                             selector, port, role))
        index_field = _STATEFUL_INDEX if kind == "StatefulSet" else _JOB_INDEX
        # TF_CONFIG is JSON with the index spliced in by Kubernetes' $(TASK_INDEX) expansion.
        tf_config = json.dumps({"cluster": cluster, "task": {"type": role, "index": 0}},
                               sort_keys=True).replace('"index": 0', '"index": $(TASK_INDEX)')
        env = [_index_env("TASK_INDEX", index_field),
               {"name": "TF_CONFIG", "value": tf_config},
               _secret_env("TENSORWEAVE_AUTH_TOKEN", secret),
               {"name": "PYTHONUNBUFFERED", "value": "1"}]
        container = _container(image, command, env, port, cpu, memory)
        if kind == "StatefulSet":
            objects.append(_headless_service(set_name, name, namespace,
                                             {"app.kubernetes.io/name": name,
                                              "tensorweave/role": role}, port, role))
            objects.append(_stateful_set(set_name, name, namespace, role, count, container,
                                         set_name))
        else:
            objects.append(_indexed_job(set_name, name, namespace, role, count, container))
    return objects


def allreduce_manifests(num_ranks, image, command, name="tensorweave", namespace=None,
                        port=DEFAULT_PORT, cpu="1", memory="1Gi", token=None):
    """The objects of an allreduce job of `num_ranks` pods; see the module docstring."""
    _check(0, num_ranks, image, command, name, allreduce=True)
    secret = f"{name}-token"
    objects = [_token_secret(secret, name, namespace, token or secrets.token_hex(16))]
    for rank in range(num_ranks):
        selector = _task_selector(name, "rank", "Job", rank, None)
        objects.append(_headless_service(f"{name}-rank-{rank}", name, namespace, selector,
                                         port, "rank"))
    # The variables of a local `tensorweave run` rank, with the pod's index as the rank and
    # rank 0's Service as the coordinator.
    local = run_command.build_plan(num_ranks, command, host=f"{name}-rank-0", port=port,
                                   token="from-the-secret")[0].env
    env = [_index_env("TENSORWEAVE_RANK", _JOB_INDEX)]
    for key, value in local.items():
        if key == "TENSORWEAVE_JOB_TOKEN":
            env.append(_secret_env(key, secret))
        elif key != "TENSORWEAVE_RANK":
            env.append({"name": key, "value": value})
    env.append({"name": "PYTHONUNBUFFERED", "value": "1"})
    container = _container(image, command, env, port, cpu, memory)
    objects.append(_indexed_job(f"{name}-rank", name, namespace, "rank", num_ranks, container))
    return objects


def _scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))  # a double-quoted YAML string: no type guessing by readers


def to_yaml(value, indent=0):
    """Block-style YAML of dicts, lists and scalars (strings always quoted)."""
    pad = " " * indent
    lines = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:")
                lines.append(to_yaml(item, indent + 2))
            else:
                empty = "{}" if isinstance(item, dict) else "[]"
                text = empty if isinstance(item, (dict, list)) else _scalar(item)
                lines.append(f"{pad}{key}: {text}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)) and item:
                body = to_yaml(item, indent + 2)
                lines.append(f"{pad}- {body[indent + 2:]}")
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    else:
        lines.append(pad + _scalar(value))
    return "\n".join(lines)


def add_parser(commands):
    parser = commands.add_parser("k8s", help="write Kubernetes manifests for a PS or "
                                 "allreduce job")
    parser.add_argument("--image", required=True, help="container image with tensorweave")
    parser.add_argument("--ps", type=int, default=1, help="parameter server tasks")
    parser.add_argument("--workers", type=int, default=1, help="worker tasks")
    parser.add_argument("--chief", action="store_true", help="add a 'chief' task")
    parser.add_argument("--allreduce", action="store_true",
                        help="an allreduce job of -np ranks instead of ps/workers")
    parser.add_argument("-np", "--num-proc", dest="num_proc", type=int, default=None,
                        help="ranks of an --allreduce job")
    parser.add_argument("--name", default="tensorweave", help="prefix of every object name")
    parser.add_argument("--namespace", default=None)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--cpu", default="1", help="CPU request (and limit) per pod")
    parser.add_argument("--memory", default="1Gi", help="memory request (and limit) per pod")
    parser.add_argument("-o", "--output", default=None,
                        help="directory to write one NN-kind-name.yaml per object")
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="command",
                        help="the command every pod runs, after '--'")
    return parser


def run(args):
    command = args.argv[1:] if args.argv and args.argv[0] == "--" else args.argv
    try:
        if args.allreduce:
            if args.num_proc is None:
                raise ValueError("--allreduce needs -np N, the number of ranks")
            objects = allreduce_manifests(args.num_proc, args.image, command, args.name,
                                          args.namespace, args.port, args.cpu, args.memory)
        else:
            if args.num_proc is not None:
                raise ValueError("-np is for --allreduce jobs; give --ps and --workers")
            objects = ps_manifests(args.ps, args.workers, args.image, command, args.name,
                                   args.namespace, args.port, args.chief, args.cpu,
                                   args.memory)
    except ValueError as exc:
        print(f"tensorweave k8s: {exc}", file=sys.stderr)
        return 2
    documents = [to_yaml(obj) + "\n" for obj in objects]
    if args.output is None:
        sys.stdout.write("---\n".join(documents))
        return 0
    os.makedirs(args.output, exist_ok=True)
    for number, (obj, text) in enumerate(zip(objects, documents)):
        path = os.path.join(args.output, f"{number:02d}-{obj['kind'].lower()}-"
                            f"{obj['metadata']['name']}.yaml")
        with open(path, "w") as handle:
            handle.write(text)
    print(f"wrote {len(objects)} manifests to {args.output}", file=sys.stderr)
    return 0
