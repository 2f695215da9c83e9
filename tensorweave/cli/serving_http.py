"""TF Serving's REST API over the standard library's HTTP server (serve_command.py runs it).

    GET  /v1/models/NAME[/versions/V]            the version's status
    GET  /v1/models/NAME[/versions/V]/metadata   the signatures (inputs, outputs, dtypes, shapes)
    POST /v1/models/NAME[/versions/V]:predict    {"instances": [...]}  -> {"predictions": [...]}
                                                 {"inputs": ...}       -> {"outputs": ...}

Row format: each instance is one example (an {input: value} object when the signature has
several inputs); the rows are stacked into a batch and each output is split back into rows.
Columnar format: "inputs" is the whole batch (an {input: value} object for several inputs) and
"outputs" is each output whole (an object for several outputs). "signature_name" picks a
signature other than the default. Inputs are numbers, booleans or strings ({"b64": "..."} for
binary ones, and outputs whose key ends in "_bytes" answer so, as in TF Serving), checked
against each input's dtype and static shape before anything runs; a bad request answers 400
with {"error": "..."} naming the input.

Requests only name a model and a signature, matched against what was loaded: nothing in a
request becomes a path. Bodies larger than the bound are refused before they are read.
"""
import base64
import binascii
import http.server
import json
import re
import threading

import numpy as np

from tensorweave.distributed import security
from tensorweave.framework import dtypes

_ROUTE = re.compile(r"^/v1/models/(?P<name>[^/:]+)(?:/versions/(?P<version>\d+))?"
                    r"(?P<rest>/metadata|:predict)?$")
# A client that stops sending mid-request holds a thread this long at most.
SOCKET_TIMEOUT_SECONDS = 30


class RequestError(Exception):
    """A client mistake: answered with this status and {"error": message}."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


# DataType enum names (types.proto) where they differ from "DT_" + the dtype's name.
_DATATYPE_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}


def _dtype_name(dtype):
    name = dtype.base_dtype.name
    return _DATATYPE_NAMES.get(name, "DT_" + name.upper())


def _tensor_info(tensor):
    shape = tensor.shape
    info = {"dtype": _dtype_name(tensor.dtype), "name": tensor.name}
    if shape.ndims is None:
        info["tensor_shape"] = {"dim": [], "unknown_rank": True}
    else:
        info["tensor_shape"] = {"dim": [{"size": str(-1 if dim is None else dim), "name": ""}
                                        for dim in shape.as_list()], "unknown_rank": False}
    return info


def metadata(name, version, signatures):
    """The body of GET .../metadata, shaped as TF Serving's."""
    defs = {key: {"inputs": {k: _tensor_info(t) for k, t in sorted(model.inputs.items())},
                  "outputs": {k: _tensor_info(t) for k, t in sorted(model.outputs.items())},
                  "method_name": model.method_name}
            for key, model in signatures.items()}
    return {"model_spec": {"name": name, "signature_name": "", "version": str(version)},
            "metadata": {"signature_def": {"signature_def": defs}}}


def _nested_shape(key, value):
    if not isinstance(value, list):
        return ()
    shapes = {_nested_shape(key, item) for item in value}
    if len(shapes) > 1:
        raise RequestError(f"input {key!r}: not a rectangular array (ragged nesting)")
    return (len(value),) + (shapes.pop() if shapes else ())


def _leaves(value):
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _string_array(key, value):
    """JSON strings (UTF-8) and {"b64": ...} objects (binary, TF Serving's convention) as an
    object array of bytes."""
    shape, leaves = _nested_shape(key, value), []
    for leaf in _leaves(value):
        if isinstance(leaf, str):
            leaves.append(leaf.encode("utf-8"))
        elif isinstance(leaf, dict) and list(leaf) == ["b64"] and isinstance(leaf["b64"], str):
            try:
                leaves.append(base64.b64decode(leaf["b64"], validate=True))
            except binascii.Error as exc:
                raise RequestError(f"input {key!r}: bad base64 in a b64 value ({exc})") from None
        else:
            raise RequestError(f"input {key!r}: expected strings or {{\"b64\": ...}} objects "
                               f"(dtype string), got {type(leaf).__name__}")
    array = np.empty(len(leaves), dtype=object)
    array[:] = leaves
    return array.reshape(shape)


def to_array(key, value, tensor):
    """`value` (JSON) as an array of `tensor`'s dtype and static shape; RequestError naming
    the input otherwise."""
    dtype = tensor.dtype.base_dtype
    if dtype == dtypes.string:
        return _check_shape(key, _string_array(key, value), tensor)
    try:
        array = np.asarray(value)
    except ValueError as exc:  # ragged nesting
        raise RequestError(f"input {key!r}: not a rectangular array ({exc})") from None
    if array.dtype == object or array.dtype.kind in "USV":
        raise RequestError(f"input {key!r}: expected {dtype.name} values, got a ragged array "
                           "or non-numbers")
    if dtype.is_bool:
        if array.dtype.kind != "b":
            raise RequestError(f"input {key!r}: expected booleans (dtype bool)")
    elif dtype.is_integer:
        if array.dtype.kind not in "iu":
            raise RequestError(f"input {key!r}: expected integers (dtype {dtype.name}), got "
                               f"{array.dtype.name} values")
        limits = np.iinfo(dtype.as_numpy_dtype)
        if array.size and (array.min() < limits.min or array.max() > limits.max):
            raise RequestError(f"input {key!r}: a value is out of range for {dtype.name}")
    elif dtype.is_floating:
        if array.dtype.kind not in "iuf":
            raise RequestError(f"input {key!r}: expected numbers (dtype {dtype.name})")
    else:
        raise RequestError(f"input {key!r}: dtype {dtype.name} is not served over JSON here")
    return _check_shape(key, array.astype(dtype.as_numpy_dtype), tensor)


def _check_shape(key, array, tensor):
    shape = tensor.shape
    if shape.ndims is not None:
        expected = shape.as_list()
        if array.ndim != len(expected) or any(
                want is not None and want != got for want, got in zip(expected, array.shape)):
            wanted = [-1 if dim is None else dim for dim in expected]
            raise RequestError(f"input {key!r}: shape {list(array.shape)} does not match the "
                               f"signature's {wanted}")
    return array


def _rows_to_columns(instances, input_keys):
    if not isinstance(instances, list) or not instances:
        raise RequestError('"instances" must be a non-empty list of examples')
    if len(input_keys) == 1:
        return {input_keys[0]: instances}
    columns = {key: [] for key in input_keys}
    for index, instance in enumerate(instances):
        if not isinstance(instance, dict) or sorted(instance) != sorted(input_keys):
            raise RequestError(f"instance {index}: expected an object with the inputs "
                               f"{sorted(input_keys)}")
        for key in input_keys:
            columns[key].append(instance[key])
    return columns


def _to_json(key, array):
    """An output as JSON; bytes as UTF-8 text, or {"b64": ...} when the output's key ends in
    "_bytes" or the bytes are not UTF-8 (TF Serving's convention)."""
    if array.dtype.kind not in "SO":
        return array.tolist()

    def text(item):
        item = item if isinstance(item, bytes) else str(item).encode("utf-8")
        if not key.endswith("_bytes"):
            try:
                return item.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return {"b64": base64.b64encode(item).decode("ascii")}

    return np.vectorize(text, otypes=[object])(array).tolist() if array.size else \
        array.tolist()


def predict(model, request):
    """The response body of a predict request (a parsed JSON object) against `model`."""
    row_format = "instances" in request
    if row_format == ("inputs" in request):
        raise RequestError('give exactly one of "instances" (row format) or "inputs" '
                           '(columnar format)')
    keys = sorted(model.inputs)
    if row_format:
        columns = _rows_to_columns(request["instances"], keys)
    elif len(keys) == 1 and not (isinstance(request["inputs"], dict) and
                                 sorted(request["inputs"]) == keys):
        columns = {keys[0]: request["inputs"]}
    else:
        columns = request["inputs"]
        if not isinstance(columns, dict) or sorted(columns) != keys:
            given = sorted(columns) if isinstance(columns, dict) else type(columns).__name__
            raise RequestError(f'"inputs" must name the inputs {keys}; got {given}')
    feeds = {key: to_array(key, columns[key], model.inputs[key]) for key in keys}
    outputs = model.run(feeds)
    if row_format:
        batch = {len(value) for value in outputs.values() if value.ndim}
        if len(batch) != 1 or any(value.ndim == 0 for value in outputs.values()):
            raise RequestError("the row format needs every output to have one batch "
                               "dimension; use the columnar format (\"inputs\")")
        if len(outputs) == 1:
            return {"predictions": _to_json(*next(iter(outputs.items())))}
        per_output = {key: _to_json(key, value) for key, value in outputs.items()}
        return {"predictions": [{key: rows[i] for key, rows in per_output.items()}
                                for i in range(batch.pop())]}
    if len(outputs) == 1:
        return {"outputs": _to_json(*next(iter(outputs.items())))}
    return {"outputs": {key: _to_json(key, value) for key, value in outputs.items()}}


class ModelService:
    """What the handler serves: one model name and version, its signatures, and the rules."""

    def __init__(self, name, version, signatures, default_signature, token, max_body_bytes):
        if default_signature not in signatures:
            raise ValueError(f"The model has no signature {default_signature!r}; it has "
                           f"{sorted(signatures)}")
        self.name, self.version = name, version
        self.signatures, self.default_signature = signatures, default_signature
        self.token, self.max_body_bytes = token, max_body_bytes

    def close(self):
        next(iter(self.signatures.values())).close()  # the one session all signatures share

    def route(self, path):
        match = _ROUTE.match(path.split("?", 1)[0])
        if not match or match.group("name") != self.name:
            raise RequestError(f"no such model or endpoint: {path!r} (this server serves "
                               f"/v1/models/{self.name})", 404)
        if match.group("version") and int(match.group("version")) != self.version:
            raise RequestError(f"model {self.name!r} has no version {match.group('version')} "
                               f"(serving version {self.version})", 404)
        return match.group("rest") or ""

    def status(self):
        return {"model_version_status": [{"version": str(self.version), "state": "AVAILABLE",
                                          "status": {"error_code": "OK",
                                                     "error_message": ""}}]}

    def predict(self, request):
        if not isinstance(request, dict):
            raise RequestError("the request body must be a JSON object")
        key = request.get("signature_name") or self.default_signature
        if key not in self.signatures:
            raise RequestError(f"no signature {key!r}; this model has {sorted(self.signatures)}")
        return predict(self.signatures[key], request)


def make_handler(service):
    """A BaseHTTPRequestHandler class answering for `service`."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body leave in two writes: with Nagle on, the body waited for the client's
        # delayed ACK, 40 ms a request (benchmarks/bench_export_serve.py measured 45 ms/call).
        disable_nagle_algorithm = True
        timeout = SOCKET_TIMEOUT_SECONDS
        server_version = "tensorweave-serve"

        def log_message(self, format, *args):  # noqa: A002 - the base class's signature
            pass  # one line per request would drown the server's own output

        def _reply(self, status, body):
            data = json.dumps(body).encode("utf-8")
            if self._body_pending:
                # An unread body would be parsed as the next request: end the connection.
                self.close_connection = True
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 401:
                self.send_header("WWW-Authenticate", "Bearer")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self):
            if service.token is None:
                return True
            scheme, _, given = (self.headers.get("Authorization") or "").partition(" ")
            return scheme.lower() == "bearer" and security.token_matches(service.token,
                                                                          given.strip())

        def _handle(self, method):
            self._body_pending = bool(self.headers.get("Transfer-Encoding")) or \
                (self.headers.get("Content-Length") or "0").strip() != "0"
            try:
                if not self._authorized():
                    raise RequestError("missing or wrong token: send 'Authorization: Bearer "
                                       "TOKEN' with the server's --auth-token-file token", 401)
                rest = service.route(self.path)
                if method == "GET" and rest == "":
                    return self._reply(200, service.status())
                if method == "GET" and rest == "/metadata":
                    return self._reply(200, metadata(service.name, service.version,
                                                     service.signatures))
                if method == "POST" and rest == ":predict":
                    return self._reply(200, service.predict(self._json_body()))
                raise RequestError(f"{method} is not allowed on {self.path!r}", 405)
            except RequestError as exc:
                self._reply(exc.status, {"error": str(exc)})
            except Exception as exc:  # noqa: BLE001 - the model's own failure, reported
                self._reply(_status_of(exc), {"error": f"{type(exc).__name__}: {exc}"})

        def _json_body(self):
            length = self.headers.get("Content-Length")
            if self.headers.get("Transfer-Encoding") or length is None:
                raise RequestError("send the body with a Content-Length (no chunked "
                                   "transfer encoding)", 411)
            try:
                size = int(length)
            except ValueError:
                raise RequestError(f"bad Content-Length {length!r}") from None
            if size < 0 or size > service.max_body_bytes:
                raise RequestError(f"request body of {size} bytes exceeds the limit of "
                                   f"{service.max_body_bytes} (--max-body-bytes)", 413)
            body = self.rfile.read(size)
            if len(body) != size:
                raise RequestError("the request body ended early")
            self._body_pending = False
            try:
                return json.loads(body)
            except (UnicodeDecodeError, ValueError) as exc:
                raise RequestError(f"the request body is not valid JSON: {exc}") from None
            except RecursionError:
                raise RequestError("the request body nests too deeply") from None

        def do_GET(self):  # noqa: N802 - http.server's naming
            self._handle("GET")

        def do_POST(self):  # noqa: N802
            self._handle("POST")

        def do_PUT(self):  # noqa: N802
            self._handle("PUT")

        do_DELETE = do_PUT  # noqa: N815

    return Handler


class BoundedHTTPServer(http.server.ThreadingHTTPServer):
    """A thread per connection, at most `max_connections` at once: one more is answered 503
    and closed at once, so idle or slow clients cannot pile up threads without bound."""

    daemon_threads = True

    def __init__(self, address, handler, max_connections):
        if max_connections <= 0:
            raise ValueError(f"--max-connections must be positive, got {max_connections}")
        self._slots = threading.BoundedSemaphore(max_connections)
        self.max_connections = max_connections
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        if not self._slots.acquire(blocking=False):
            body = json.dumps({"error": f"the server is at its {self.max_connections} "
                               "connections (--max-connections); retry later"}).encode()
            try:
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
                                b"application/json\r\nConnection: close\r\nContent-Length: "
                                + str(len(body)).encode() + b"\r\n\r\n" + body)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def _status_of(exc):
    """400 for errors the input caused (tensorweave's InvalidArgumentError and kin), else 500."""
    from tensorweave.framework import errors

    client_errors = (errors.InvalidArgumentError, errors.OutOfRangeError, ValueError, TypeError)
    return 400 if isinstance(exc, client_errors) else 500
