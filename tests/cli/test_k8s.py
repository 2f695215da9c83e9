"""`tensorweave k8s`: the manifests are valid Kubernetes objects (checked field by field
against the `kubernetes` client's models: no unknown field, every required one), every
per-task Service selects exactly the pod of its task, and the pods' commands and environments,
run as local processes the way the kubelet would start them (Kubernetes' `$(VAR)` expansion,
field and Secret references; Service names mapped to 127.0.0.1 ports), train."""
import inspect
import json
import os
import re
import sys

import pytest

from tensorweave.cli import k8s, launch
from tensorweave.cli.main import main as cli_main

yaml = pytest.importorskip("yaml")
kubernetes = pytest.importorskip("kubernetes")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(REPO, "tests", "distributed", "scripts", "between_graph_mlp.py")
HOROVOD_CHECKS = os.path.join(REPO, "tests", "collective", "scripts", "horovod_checks.py")
_MODELS = {("v1", "Service"): "V1Service", ("v1", "Secret"): "V1Secret",
           ("batch/v1", "Job"): "V1Job", ("apps/v1", "StatefulSet"): "V1StatefulSet"}


def _check_fields(value, type_name, path):
    """Every key of `value` is a field of the model `type_name` (recursively)."""
    if type_name.lower().startswith("list["):  # "list[V1Container]" or "List[...]"
        assert isinstance(value, list), f"{path}: expected a list"
        for i, item in enumerate(value):
            _check_fields(item, type_name[5:-1], f"{path}[{i}]")
        return
    if type_name.lower().startswith(("dict(", "dict[")):  # "dict(str, str)" or "Dict[...]"
        assert isinstance(value, dict), f"{path}: expected a map"
        item_type = type_name[5:-1].split(",", 1)[1].strip()
        for key, item in value.items():
            _check_fields(item, item_type, f"{path}.{key}")
        return
    model = getattr(kubernetes.client.models, type_name, None)
    if model is None:  # str, int, bool, object, datetime
        assert not isinstance(value, (dict, list)) or type_name == "object", path
        return
    assert isinstance(value, dict), f"{path}: expected a {type_name} object"
    fields = {json_name: attr for attr, json_name in model.attribute_map.items()}
    for key, item in value.items():
        assert key in fields, f"{path}: {key!r} is not a field of {type_name}"
        _check_fields(item, model.openapi_types[fields[key]], f"{path}.{key}")


class _Response:  # what ApiClient.deserialize(response, type) reads in clients before 35
    def __init__(self, obj):
        self.data = json.dumps(obj)


def _deserialize(client, obj, model):
    """The model object, as the client builds it from a response; it raises for a missing
    required field or a value of the wrong type."""
    if "content_type" in inspect.signature(client.deserialize).parameters:
        return client.deserialize(json.dumps(obj), model, "application/json")
    return client.deserialize(_Response(obj), model)


def validate(objects):
    client = kubernetes.client.ApiClient()
    for obj in objects:
        model = _MODELS[(obj["apiVersion"], obj["kind"])]
        _check_fields(obj, model, obj["kind"])
        parsed = _deserialize(client, obj, model)
        assert parsed.metadata.name == obj["metadata"]["name"]
        assert len(obj["metadata"]["name"]) <= 63


def _expand(text, env):
    """Kubernetes' expansion of $(NAME) in a container's env values."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)),
                  text)


def local_pods(objects):
    """[(pod labels, role, index, argv, env)] as the kubelet would start them."""
    secrets = {o["metadata"]["name"]: o["stringData"] for o in objects if o["kind"] == "Secret"}
    pods = []
    for obj in objects:
        if obj["kind"] not in ("Job", "StatefulSet"):
            continue
        spec = obj["spec"]
        count = spec["completions"] if obj["kind"] == "Job" else spec["replicas"]
        container, = spec["template"]["spec"]["containers"]
        for index in range(count):
            labels = dict(spec["template"]["metadata"]["labels"])
            if obj["kind"] == "Job":
                labels["batch.kubernetes.io/job-completion-index"] = str(index)
                fields = {"metadata.annotations['batch.kubernetes.io/job-completion-index']":
                          str(index)}
            else:
                labels["statefulset.kubernetes.io/pod-name"] = f"{obj['metadata']['name']}-{index}"
                labels["apps.kubernetes.io/pod-index"] = str(index)
                fields = {"metadata.labels['apps.kubernetes.io/pod-index']": str(index)}
            env = {}
            for var in container["env"]:
                if "value" in var:
                    env[var["name"]] = _expand(var["value"], env)
                elif "fieldRef" in var["valueFrom"]:
                    env[var["name"]] = fields[var["valueFrom"]["fieldRef"]["fieldPath"]]
                else:
                    ref = var["valueFrom"]["secretKeyRef"]
                    env[var["name"]] = secrets[ref["name"]][ref["key"]]
            argv = container["command"] + container["args"]
            role = labels["tensorweave/role"]
            pods.append((labels, role, index, argv, env))
    return pods


def task_services(objects, pods):
    """{service name: (role, index) of the one pod it selects}; a role's governing Service
    (several pods) is left out."""
    selected = {}
    for obj in objects:
        if obj["kind"] != "Service":
            continue
        assert obj["spec"]["clusterIP"] == "None"
        selector = obj["spec"]["selector"]
        matches = [(role, index) for labels, role, index, _, _ in pods
                   if all(labels.get(k) == v for k, v in selector.items())]
        if len(matches) == 1:
            selected[obj["metadata"]["name"]] = matches[0]
        else:
            assert not obj["metadata"]["name"][-1].isdigit(), (obj, matches)
    return selected


def _as_local(value, addresses):
    for remote, local in addresses.items():
        value = value.replace(remote, local)
    return value


def _render(argv):
    """The manifests `tensorweave k8s argv` prints, parsed back from its YAML."""
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["k8s", *argv]) == 0
    return [doc for doc in yaml.safe_load_all(out.getvalue()) if doc]


def test_ps_manifests_are_valid_and_name_every_task():
    objects = _render(["--ps", "2", "--workers", "4", "--chief", "--image", "repo/img:1",
                       "--cpu", "2", "--memory", "3Gi", "--namespace", "ml", "--", "python",
                       "train.py", "--steps", "10"])
    validate(objects)
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert ("StatefulSet", "tensorweave-ps") in kinds
    assert ("Job", "tensorweave-worker") in kinds and ("Job", "tensorweave-chief") in kinds
    pods = local_pods(objects)
    assert sorted((role, index) for _, role, index, _, _ in pods) == sorted(
        [("ps", 0), ("ps", 1), ("chief", 0)] + [("worker", i) for i in range(4)])
    services = task_services(objects, pods)
    assert len(services) == 7
    for labels, role, index, argv, env in pods:
        assert argv == ["python", "train.py", "--steps", "10"]
        config = json.loads(env["TF_CONFIG"])
        assert config["task"] == {"type": role, "index": index}
        assert config["cluster"]["worker"] == [f"tensorweave-worker-{i}:2222" for i in range(4)]
        # The address a task's TF_CONFIG gives is the Service selecting that very pod.
        host = config["cluster"][role][index].split(":")[0]
        assert services[host] == (role, index)
        assert env["TENSORWEAVE_AUTH_TOKEN"]
    for obj in objects:
        assert obj["metadata"]["namespace"] == "ml"
        if obj["kind"] in ("Job", "StatefulSet"):
            resources = obj["spec"]["template"]["spec"]["containers"][0]["resources"]
            assert resources["requests"] == {"cpu": "2", "memory": "3Gi"}


def test_allreduce_manifests_give_the_run_environment():
    objects = _render(["--allreduce", "-np", "3", "--image", "img", "--", "python", "t.py"])
    validate(objects)
    pods = local_pods(objects)
    assert [index for _, _, index, _, _ in pods] == [0, 1, 2]
    services = task_services(objects, pods)
    for _, _, index, _, env in pods:
        assert env["TENSORWEAVE_RANK"] == str(index) and env["TENSORWEAVE_SIZE"] == "3"
        assert env["TENSORWEAVE_COORDINATOR"] == "tensorweave-rank-0:2222"
        assert services["tensorweave-rank-0"] == ("rank", 0)
    assert len({env["TENSORWEAVE_JOB_TOKEN"] for *_, env in pods}) == 1


def test_the_schema_check_catches_unknown_and_missing_fields():
    objects = k8s.allreduce_manifests(1, "img", ["python", "t.py"])
    job = objects[-1]
    container = job["spec"]["template"]["spec"]["containers"][0]
    container["resource"] = container.pop("resources")  # a typo
    with pytest.raises(AssertionError, match="'resource' is not a field of V1Container"):
        validate([job])
    container["resources"] = container.pop("resource")
    del container["name"]  # a required field
    with pytest.raises(Exception, match="name"):
        validate([job])


@pytest.mark.parametrize("argv, message", [
    (["--workers", "2", "--", "python", "t.py"], "--image"),
    (["--image", "i", "--workers", "0", "--", "python", "t.py"], "--workers"),
    (["--image", "i", "--allreduce", "--", "python", "t.py"], "-np"),
    (["--image", "i", "--name", "Bad_Name", "--", "python", "t.py"], "--name"),
    (["--image", "i"], "command"),
])
def test_bad_arguments_are_named(argv, message, capsys):
    try:
        status = cli_main(["k8s", *argv])
    except SystemExit as exc:  # argparse's own errors (a missing required flag)
        status = exc.code
    assert status == 2
    assert message in capsys.readouterr().err


def _run_pods(objects, monkeypatch):
    pods = local_pods(objects)
    services = task_services(objects, pods)
    ports = launch.free_ports(len(services))
    addresses = {f"{name}:{k8s.DEFAULT_PORT}": f"127.0.0.1:{port}"
                 for name, port in zip(services, ports)}
    plan = []
    for _, role, index, argv, env in pods:
        env = {key: _as_local(value, addresses) for key, value in env.items()}
        tf_config = json.loads(env.pop("TF_CONFIG")) if "TF_CONFIG" in env else {}
        argv = [sys.executable if argv[0] == "python" else argv[0]] + argv[1:]
        plan.append(launch.TaskLaunch(role, index, argv, tf_config, env))
    token = next(env for *_, env in pods).get("TENSORWEAVE_AUTH_TOKEN")
    if token:  # the launcher's own calls (asking the ps to stop) present the Secret's token
        monkeypatch.setenv("TENSORWEAVE_AUTH_TOKEN", token)
    for name in ("TF_CONFIG", "TENSORWEAVE_RANK", "TENSORWEAVE_SIZE", "TENSORWEAVE_COORDINATOR"):
        monkeypatch.delenv(name, raising=False)
    lines = []
    status = launch.run_plan(plan, output=lines.append)
    return status, "\n".join(lines)


@pytest.mark.timeout(90)
def test_the_ps_pods_train_as_local_processes(monkeypatch):
    objects = k8s.ps_manifests(1, 2, "img", ["python", MLP, "--steps", "5"])
    status, output = _run_pods(objects, monkeypatch)
    assert status == 0, output
    done = re.findall(r"worker (\d) done: steps=5 global_step=(\d+)", output)
    assert sorted(index for index, _ in done) == ["0", "1"], output
    assert max(int(step) for _, step in done) >= 5


@pytest.mark.timeout(90)
def test_the_allreduce_pods_run_as_local_ranks(monkeypatch):
    objects = k8s.allreduce_manifests(2, "img", ["python", HOROVOD_CHECKS])
    status, output = _run_pods(objects, monkeypatch)
    assert status == 0, output
    results = [json.loads(line.split("RESULT", 1)[1]) for line in output.splitlines()
               if "RESULT" in line]
    assert len(results) == 2, output
    assert all(r["checks"] == ["ops", "dense", "aggregation", "sparse", "hook", "join"]
               for r in results)
