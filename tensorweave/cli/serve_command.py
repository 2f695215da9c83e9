"""`tensorweave serve`: a tf.saved_model export behind TF Serving's REST API (serving_http.py).

    tensorweave serve --model-dir DIR --port 8501 [--model-name NAME] [--host 127.0.0.1]
                      [--signature serving_default] [--auth-token-file FILE]

DIR is a SavedModel (saved_model.pb inside: version 1) or, as TF Serving lays it out, a base
directory of numbered versions (DIR/1, DIR/2, ...), of which the highest is served. The server
prints one line once it answers ("tensorweave serve: model 'NAME' version V at
http://HOST:PORT/v1/models/NAME"), runs until SIGINT/SIGTERM and exits 0.

Security (README "Security"), as `tensorweave server`: it listens on loopback unless --host
names another interface; --auth-token-file FILE (or $TENSORWEAVE_AUTH_TOKEN) makes every
request carry 'Authorization: Bearer TOKEN'; bodies above --max-body-bytes are refused unread;
at most --max-connections connections are served at once (each idle one for 30 s at most).
"""
import os
import signal
import sys
import threading

from tensorweave.cli import signature_model

DEFAULT_MAX_BODY_BYTES = 64 << 20
DEFAULT_MAX_CONNECTIONS = 256


def add_parser(commands):
    serve = commands.add_parser("serve", help="serve a SavedModel over TF Serving's REST "
                                "API (predict, status, metadata)")
    serve.add_argument("--model-dir", required=True,
                       help="a SavedModel, or a directory of numbered SavedModel versions")
    serve.add_argument("--port", type=int, required=True, help="port to listen on (0: any)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="interface to listen on (default: loopback only)")
    serve.add_argument("--model-name", default="default",
                       help="the NAME in /v1/models/NAME (default: default, as TF Serving)")
    signature_model.add_saved_model_arguments(
        serve, "the signature used when a request names none (default: serving_default)")
    serve.add_argument("--auth-token-file", default=None,
                       help="file holding the token requests must carry as 'Authorization: "
                       "Bearer TOKEN' (default: $TENSORWEAVE_AUTH_TOKEN; none: no check)")
    serve.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES,
                       help="largest request body accepted (default 64 MiB)")
    serve.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                       help="open connections served at once (a thread each); more get 503 "
                       f"(default {DEFAULT_MAX_CONNECTIONS})")
    return serve


def resolve_version(model_dir):
    """(SavedModel directory, version): DIR itself as version 1, else its highest numbered
    subdirectory holding a SavedModel."""
    from tensorweave.train.saved_model import loader

    if loader.maybe_saved_model_directory(model_dir):
        return model_dir, 1
    versions = sorted((int(entry), os.path.join(model_dir, entry))
                      for entry in (os.listdir(model_dir) if os.path.isdir(model_dir) else ())
                      if entry.isdigit() and loader.maybe_saved_model_directory(
                          os.path.join(model_dir, entry)))
    if not versions:
        raise FileNotFoundError(f"No SavedModel in {model_dir} nor in a numbered version "
                                "directory under it")
    version, path = versions[-1]
    return path, version


def _token(args):
    from tensorweave.distributed import security

    if args.auth_token_file:
        return security.read_token_file(args.auth_token_file)
    return os.environ.get(security.TOKEN_ENV) or None


def build_server(args):
    """(serving_http.BoundedHTTPServer bound as the arguments say, its ModelService)."""
    from tensorweave.cli import serving_http

    if args.max_body_bytes <= 0:
        raise ValueError(f"--max-body-bytes must be positive, got {args.max_body_bytes}")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in 0..65535, got {args.port}")
    token = _token(args)
    path, version = resolve_version(args.model_dir)
    signatures = signature_model.load_saved_model_signatures(path, tuple(args.tag or ["serve"]))
    try:
        service = serving_http.ModelService(args.model_name, version, signatures,
                                            args.signature, token, args.max_body_bytes)
        server = serving_http.BoundedHTTPServer((args.host, args.port),
                                                serving_http.make_handler(service),
                                                args.max_connections)
    except BaseException:
        next(iter(signatures.values())).close()  # the one session all signatures share
        raise
    return server, service


def run(args):
    try:
        server, service = build_server(args)
    except (OSError, KeyError, ValueError, RuntimeError) as exc:
        print(f"tensorweave serve: {exc}", file=sys.stderr)
        return 2

    def stop(signum, frame):
        # shutdown() waits for serve_forever to return: call it off the serving thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = server.server_address[:2]
    notice = "" if service.token else " (no auth token: anyone who reaches it may call it)"
    print(f"tensorweave serve: model {service.name!r} version {service.version} at "
          f"http://{host}:{port}/v1/models/{service.name}{notice}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        service.close()
    print("tensorweave serve: stopped", flush=True)
    return 0
