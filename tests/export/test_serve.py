"""`tensorweave serve` answers TF Serving's REST API for a SavedModel, checked with a real HTTP
client (urllib): a server subprocess of the CLI (auth token, versioned model directory, body
limit, SIGTERM) and an in-process server for a two-input model. Predictions equal what
tensorweave computes for the same SavedModel in this process."""
import base64
import concurrent.futures
import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.error
import urllib.request

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.cli import serve_command
from tensorweave.cli.signature_model import SignatureModel
from tests.export import models

pytestmark = pytest.mark.timeout(120)
TOKEN = "serve-test-token-7f3a"
MAX_BODY = 200_000
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _call(url, body=None, token=TOKEN, method=None, raw=None):
    """(status, parsed JSON body)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A `tensorweave serve` subprocess over base/1 (softmax) and base/2 (MLP): serves 2."""
    base = tmp_path_factory.mktemp("models")
    models.train_and_save(models.softmax_regression, str(base / "1"))
    models.train_and_save(models.mlp, str(base / "2"))
    token_file = base / "token"
    token_file.write_text(TOKEN + "\n")
    env = dict(os.environ, PYTHONPATH=REPO)
    env.pop("TENSORWEAVE_AUTH_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "tensorweave.cli.main", "serve", "--model-dir", str(base),
         "--port", "0", "--model-name", "mnist", "--auth-token-file", str(token_file),
         "--max-body-bytes", str(MAX_BODY)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = _first_line(process, 60)
        match = re.search(r"at (http://127\.0\.0\.1:\d+)/v1/models/mnist$", line)
        assert match, line
        reference = SignatureModel.from_saved_model(str(base / "2"))
        yield types.SimpleNamespace(process=process, url=match.group(1) + "/v1/models/mnist",
                                    reference=reference)
        reference.close()
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def _first_line(process, seconds):
    lines = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()),
                              daemon=True)
    reader.start()
    reader.join(seconds)
    assert lines and lines[0], f"no serving line; stderr: {process.stderr.read()}"
    return lines[0].strip()


def test_status_and_metadata_of_the_highest_version(served):
    assert _call(served.url) == (200, {"model_version_status": [
        {"version": "2", "state": "AVAILABLE", "status": {"error_code": "OK",
                                                          "error_message": ""}}]})
    status, body = _call(served.url + "/metadata")
    assert status == 200 and body["model_spec"] == {"name": "mnist", "signature_name": "",
                                                    "version": "2"}
    signature = body["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert signature["method_name"] == "tensorflow/serving/predict"
    images = signature["inputs"]["images"]
    assert images["dtype"] == "DT_FLOAT"
    assert [dim["size"] for dim in images["tensor_shape"]["dim"]] == ["-1", "784"]
    assert signature["outputs"]["classes"]["dtype"] == "DT_INT64"


def test_row_and_columnar_predictions_equal_tensorweave(served):
    images, _ = models.digits(5, seed=3)
    want = served.reference.run({"images": images})
    status, body = _call(served.url + ":predict", {"instances": images.tolist()})
    assert status == 200 and len(body["predictions"]) == 5
    np.testing.assert_allclose([row["probabilities"] for row in body["predictions"]],
                               want["probabilities"], rtol=0, atol=1e-6)
    assert [row["classes"] for row in body["predictions"]] == want["classes"].tolist()
    status, body = _call(served.url + "/versions/2:predict",
                         {"signature_name": "serving_default", "inputs": images.tolist()})
    assert status == 200
    np.testing.assert_allclose(body["outputs"]["probabilities"], want["probabilities"],
                               rtol=0, atol=1e-6)
    assert body["outputs"]["classes"] == want["classes"].tolist()


def test_concurrent_requests_each_get_their_own_answer(served):
    images, _ = models.digits(8, seed=4)
    want = served.reference.run({"images": images})["classes"].tolist()

    def one(index):
        status, body = _call(served.url + ":predict", {"instances": [images[index].tolist()]})
        assert status == 200
        return body["predictions"][0]["classes"]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(one, range(8))) == want


@pytest.mark.parametrize("body, status, words", [
    ({"instances": [[0.5] * 783]}, 400, ["'images'", "[1, 783]", "[-1, 784]"]),
    ({"instances": [["a"] * 784]}, 400, ["'images'", "float32"]),
    ({"instances": [[0.5] * 784, [0.5] * 3]}, 400, ["'images'", "rectangular"]),
    ({"instances": []}, 400, ["non-empty"]),
    ({"instances": [[0.0] * 784], "inputs": [[0.0] * 784]}, 400, ["exactly one"]),
    ({"signature_name": "nope", "inputs": [[0.0] * 784]}, 400, ["'nope'", "serving_default"]),
    ([1, 2], 400, ["JSON object"]),
])
def test_bad_requests_answer_400_naming_the_problem(served, body, status, words):
    got_status, got = _call(served.url + ":predict", body)
    assert got_status == status, got
    assert all(word in got["error"] for word in words), got


def test_bad_json_unknown_models_versions_and_methods(served):
    assert _call(served.url + ":predict", raw=b"{not json")[0] == 400
    status, body = _call(served.url + ":predict", raw=b"[" * 100_000 + b"]" * 100_000)
    assert status == 400 and "nests too deeply" in body["error"]
    root = served.url.rsplit("/", 1)[0]
    for path in ("/other", "/other:predict", "/mnist/versions/1", "/..%2F..%2Fetc%2Fpasswd",
                 "/mnist/../../etc/passwd"):
        status, body = _call(root + path)
        assert status == 404 and "error" in body, (path, body)
    assert _call(served.url, body={"instances": []})[0] == 405  # POST on the status URL


def test_keep_alive_and_no_desync_after_a_refused_body(served):
    host, port = re.match(r"http://([^:]+):(\d+)/", served.url).groups()
    connection = http.client.HTTPConnection(host, int(port), timeout=20)
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    body = json.dumps({"instances": [[0.25] * 784]})
    try:
        for _ in range(2):  # one connection, two answers
            connection.request("POST", "/v1/models/mnist:predict", body, headers)
            response = connection.getresponse()
            assert response.status == 200 and "predictions" in json.loads(response.read())
            assert response.getheader("Connection") != "close"
        # Refused before its body was read: the body must not be parsed as the next request.
        connection.request("POST", "/v1/models/other:predict", body, headers)
        response = connection.getresponse()
        assert response.status == 404 and response.getheader("Connection") == "close"
        response.read()
    finally:
        connection.close()


def test_token_is_required_and_checked(served):
    for token in (None, "wrong-token"):
        status, body = _call(served.url, token=token)
        assert status == 401 and "Bearer" in body["error"]
    status, _ = _call(served.url + ":predict", {"instances": [[0.0] * 784]}, token="wrong")
    assert status == 401


def test_body_over_the_limit_is_refused_unread(served):
    status, body = _call(served.url + ":predict", raw=b" " * (MAX_BODY + 1))
    assert status == 413 and str(MAX_BODY) in body["error"]
    assert _call(served.url)[0] == 200  # and the server goes on


def test_sigterm_stops_the_server_cleanly(served):
    # Last in the module: the fixture's server is stopped here, as a user would stop it.
    served.process.send_signal(signal.SIGTERM)
    out, err = served.process.communicate(timeout=30)
    assert served.process.returncode == 0, err
    assert "tensorweave serve: stopped" in out


def _two_input_model(export_dir):
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 2], name="a")
        b = tf.placeholder(tf.int32, [None], name="b")
        total = tf.reduce_sum(a, 1) + tf.cast(b, tf.float32)
        with tf.Session() as session:
            tf.saved_model.simple_save(session, export_dir, {"a": a, "b": b},
                                       {"total": total, "double_a": a * 2.0})


@contextlib.contextmanager
def _thread_server(model_dir, environment_token=None, **overrides):
    """`tensorweave serve`'s server for `model_dir`, run on a thread of this process, built
    with $TENSORWEAVE_AUTH_TOKEN set to `environment_token` (None: unset)."""
    args = types.SimpleNamespace(model_dir=model_dir, port=0, host="127.0.0.1",
                                 model_name="pair", tag=None, signature="serving_default",
                                 auth_token_file=None, max_body_bytes=1 << 20,
                                 max_connections=8)
    vars(args).update(overrides)
    old_token = os.environ.pop("TENSORWEAVE_AUTH_TOKEN", None)
    if environment_token:
        os.environ["TENSORWEAVE_AUTH_TOKEN"] = environment_token
    try:
        server, service = serve_command.build_server(args)
    finally:
        os.environ.pop("TENSORWEAVE_AUTH_TOKEN", None)
        if old_token is not None:
            os.environ["TENSORWEAVE_AUTH_TOKEN"] = old_token
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        service.close()
        thread.join(10)


@pytest.fixture()
def two_input_server(tmp_path):
    _two_input_model(str(tmp_path / "model"))
    with _thread_server(str(tmp_path / "model")) as server:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        yield f"http://{host}:{port}/v1/models/pair"


def test_the_environment_token_is_required_too(tmp_path):
    _two_input_model(str(tmp_path / "model"))
    with _thread_server(str(tmp_path / "model"), environment_token="from-env") as server:
        url = "http://%s:%d/v1/models/pair" % server.server_address[:2]
        assert _call(url, token=None)[0] == 401
        assert _call(url, token="from-env")[0] == 200


def test_connections_beyond_the_bound_get_503(tmp_path):
    _two_input_model(str(tmp_path / "model"))
    with _thread_server(str(tmp_path / "model"), max_connections=2) as server:
        address = server.server_address[:2]
        idle = [socket.create_connection(address, timeout=10) for _ in range(2)]
        try:
            time.sleep(0.3)  # both accepted, each holding a slot while it sends nothing
            status, body = _call(f"http://{address[0]}:{address[1]}/v1/models/pair",
                                 token=None)
            assert status == 503 and "--max-connections" in body["error"]
        finally:
            for connection in idle:
                connection.close()
        deadline = time.monotonic() + 10
        while _call(f"http://{address[0]}:{address[1]}/v1/models/pair", token=None)[0] != 200:
            assert time.monotonic() < deadline, "the slots were never released"
            time.sleep(0.05)


def test_two_inputs_in_row_and_columnar_format(two_input_server):
    url = two_input_server + ":predict"
    status, body = _call(url, {"instances": [{"a": [1.0, 2.0], "b": 3},
                                             {"a": [0.5, 0.25], "b": -1}]}, token=None)
    assert status == 200
    assert body == {"predictions": [{"total": 6.0, "double_a": [2.0, 4.0]},
                                    {"total": -0.25, "double_a": [1.0, 0.5]}]}
    status, body = _call(url, {"inputs": {"a": [[1, 1]], "b": [2]}}, token=None)
    assert status == 200 and body == {"outputs": {"total": [4.0], "double_a": [[2.0, 2.0]]}}


@pytest.mark.parametrize("body, words", [
    ({"inputs": {"a": [[1.0, 1.0]], "b": [2.5]}}, ["'b'", "integers"]),
    ({"inputs": {"a": [[1.0, 1.0]], "b": [2 ** 40]}}, ["'b'", "out of range", "int32"]),
    ({"inputs": {"a": [[1.0, 1.0]]}}, ["['a', 'b']"]),
    ({"instances": [{"a": [1.0, 1.0]}]}, ["instance 0", "['a', 'b']"]),
    ({"inputs": {"a": [[True, False]], "b": [1]}}, ["'a'", "numbers"]),
    ({"inputs": {"a": [[1.0, 1.0]], "b": [True]}}, ["'b'", "integers"]),
])
def test_two_input_bad_requests(two_input_server, body, words):
    status, got = _call(two_input_server + ":predict", body, token=None)
    assert status == 400, got
    assert all(word in got["error"] for word in words), got


def test_string_inputs_and_binary_outputs(tmp_path):
    with tf.Graph().as_default():
        text = tf.placeholder(tf.string, [None], name="text")
        with tf.Session() as session:
            tf.saved_model.simple_save(session, str(tmp_path / "model"), {"text": text},
                                       {"length": tf.strings.length(text),
                                        "doubled_bytes": tf.strings.join([text, text]),
                                        "upper": tf.strings.join([text, "!"])})
    binary = b"\xff\x00z"
    with _thread_server(str(tmp_path / "model")) as server:
        url = "http://%s:%d/v1/models/pair:predict" % server.server_address[:2]
        status, body = _call(url, {"instances": [
            "h\u00e9", {"b64": base64.b64encode(binary).decode()}]}, token=None)
        assert status == 200, body
        first, second = body["predictions"]
        assert first["length"] == 3 and second["length"] == 3  # bytes, as TF counts
        assert first["upper"] == "h\u00e9!"
        assert base64.b64decode(first["doubled_bytes"]["b64"]) == "h\u00e9h\u00e9".encode()
        assert base64.b64decode(second["upper"]["b64"]) == binary + b"!"  # not UTF-8
        for bad, words in (([{"b64": "!!not base64"}], ["'text'", "base64"]),
                           ([3], ["'text'", "strings"]),
                           ([["a"], "b"], ["'text'", "rectangular"])):
            status, got = _call(url, {"inputs": bad}, token=None)
            assert status == 400 and all(word in got["error"] for word in words), got


def test_serve_refuses_bad_arguments_before_listening(tmp_path, capsys):
    from tensorweave.cli import main as cli_main

    _two_input_model(str(tmp_path / "model"))
    for argv, words in ((["--model-dir", str(tmp_path / "absent")], ["No SavedModel"]),
                        (["--model-dir", str(tmp_path / "model"), "--signature", "nope"],
                         ["no signature 'nope'", "serving_default"]),
                        (["--model-dir", str(tmp_path / "model"), "--max-connections", "0"],
                         ["--max-connections must be positive"]),
                        (["--model-dir", str(tmp_path / "model"), "--auth-token-file",
                          str(tmp_path / "no-token")], ["no-token"])):
        assert cli_main.main(["serve", "--port", "0"] + argv) == 2, argv
        error = capsys.readouterr().err
        assert all(word in error for word in words), error
