"""The gRPC transport: the Server, the services, channels and the `grpc://` session target.

Importing this package registers the `grpc://` session target with the runtime
(`tf.Session("grpc://host:port")` and `tf.Session.reset("grpc://host:port")`): the runtime's
registry, not a patch of Session. tensorweave/distributed/__init__.py imports it, and
tests/distributed/test_session_target.py checks that the target is there.
"""
from tensorweave.runtime import session as _session
from tensorweave.distributed.grpc.session_target import open_remote_session, reset
from tensorweave.distributed.grpc.server import Server, request_shutdown  # noqa: F401

_session.register_session_target("grpc://", open_remote_session, reset)
