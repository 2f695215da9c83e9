"""`tensorweave server`: run one task of a cluster until it is stopped.

    tensorweave server --cluster 'ps=h0:2222;worker=h1:2222,h2:2222' --job ps --task 0
    tensorweave server                       # the cluster and task from TF_CONFIG

--cluster also takes JSON ({"ps": ["h0:2222"], ...}). The server prints one line once it
serves ("tensorweave server /job:ps/replica:0/task:0 serving at h0:2222"), then runs until
SIGINT/SIGTERM or a coordinated shutdown request (request_shutdown), and exits 0.

Security (README "Security"): --auth-token-file FILE (or $TENSORWEAVE_AUTH_TOKEN) gives the
job's token, which every call must then carry; without one the server listens on loopback
only, unless --host names the interface, and says so. --allow-path DIR (repeatable) names the
directories that checkpoint and other file ops may use (default: the working directory and
the temporary directory). --tls-cert/--tls-key make both ports speak TLS only; --tls-ca
names the cluster's CA (peers are verified, clients must present certificates it signed).
"""
import json
import signal
import sys


def parse_cluster(text):
    """A cluster dict from JSON or 'job=host:port,host:port;job2=...'."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    cluster = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        job, sep, addresses = part.partition("=")
        if not sep or not job.strip():
            raise ValueError(f"Cannot parse cluster part {part!r}: expected job=host:port,...")
        cluster[job.strip()] = [a.strip() for a in addresses.split(",") if a.strip()]
    if not cluster:
        raise ValueError("The cluster is empty")
    return cluster


def add_parser(commands):
    server = commands.add_parser("server", help="run one task of a cluster (a tf.train.Server)")
    server.add_argument("--cluster", default=None,
                        help="'ps=h:p;worker=h:p,h:p' or JSON; default: TF_CONFIG's cluster")
    server.add_argument("--job", default=None, help="this task's job (default: TF_CONFIG)")
    server.add_argument("--task", type=int, default=None, help="this task's index")
    server.add_argument("--cpus", type=int, default=1, help="CPU devices of this task")
    server.add_argument("--auth-token-file", default=None,
                        help="file holding the job's auth token (default: "
                        "$TENSORWEAVE_AUTH_TOKEN; none: loopback only)")
    server.add_argument("--host", default=None,
                        help="interface to listen on (default: the task address's, loopback "
                        "without a token)")
    server.add_argument("--allow-path", action="append", default=None, metavar="DIR",
                        help="a directory file-touching ops may use (repeatable)")
    server.add_argument("--tls-cert", default="", help="PEM certificate: serve TLS only")
    server.add_argument("--tls-key", default="", help="PEM private key of --tls-cert")
    server.add_argument("--tls-ca", default="",
                        help="PEM CA of the cluster: verify peers, require client certificates")
    server.add_argument("--max-message-bytes", type=int, default=0,
                        help="largest request accepted (default 256 MiB)")
    server.add_argument("--max-connections-per-peer", type=int, default=0,
                        help="TCP connections one peer address may hold (default 1024)")
    server.add_argument("--max-sessions-per-client", type=int, default=0,
                        help="master sessions one client address may hold (default 256)")
    server.add_argument("--max-graph-nodes", type=int, default=0,
                        help="nodes a session's GraphDef may hold per request (default "
                        "100000)")
    server.add_argument("--allow-py-func", action="store_true",
                        help="run graphs holding tf.py_func ops (refused by default: their "
                             "Python functions exist only in the process that built them)")
    return server


def run(args):
    from tensorweave.distributed import ClusterSpec, Server, TFConfigClusterResolver
    from tensorweave.distributed import security
    from tensorweave.distributed.config import RPCOptions
    from tensorweave.runtime.config import ConfigProto

    resolver = TFConfigClusterResolver()
    cluster = parse_cluster(args.cluster) if args.cluster else resolver.cluster_spec().as_dict()
    job = args.job if args.job is not None else resolver.task_type
    task = args.task if args.task is not None else resolver.task_id
    if not cluster or job is None or task is None:
        print("tensorweave server: give --cluster, --job and --task (or set TF_CONFIG)",
              file=sys.stderr)
        return 2
    try:
        token = security.read_token_file(args.auth_token_file) if args.auth_token_file \
            else None
    except (OSError, ValueError) as exc:
        print(f"tensorweave server: {exc}", file=sys.stderr)
        return 2
    rpc = RPCOptions(auth_token=token or "", bind_host=args.host or "",
                     allowed_paths=list(args.allow_path or ()),
                     max_message_bytes=args.max_message_bytes, tls_cert_file=args.tls_cert,
                     max_connections_per_peer=args.max_connections_per_peer,
                     max_graph_nodes=args.max_graph_nodes,
                     max_sessions_per_client=args.max_sessions_per_client,
                     tls_key_file=args.tls_key, tls_ca_file=args.tls_ca)
    server = Server(ClusterSpec(cluster), job, task,
                    config=ConfigProto(device_count={"CPU": args.cpus}, rpc_options=rpc),
                    allow_py_func=args.allow_py_func)
    notice = ""
    if not security.configured_token(server.config) and not args.tls_ca:
        notice = (f" (no auth token: anyone who reaches {server.bind_host} may call it"
                  f"{'; loopback only, --host to listen elsewhere' if not args.host else ''})")

    def stop(signum, frame):
        server.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"tensorweave server {server.task_name} serving at {server.target[len('grpc://'):]}"
          f"{notice}", flush=True)
    while not server.join(0.5):
        pass
    print(f"tensorweave server {server.task_name} stopped"
          f"{': ' + server.shutdown_reason if server.shutdown_reason else ''}", flush=True)
    return 0
