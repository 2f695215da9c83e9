"""The raw-TCP transport: the step-time calls (RunGraph, RecvTensor, AbortStep) and the TCP
data plane, over persistent connections to the port every server advertises in GetStatus.

gRPC stays the control plane (sessions, registration, status, shutdown) and the fallback; a
client switches a peer's step calls to TCP once it knows the port (client.py explains
why: a Python gRPC unary round trip costs ~40x a raw socket's here). framing.py is the wire
format, server.py and client.py the two halves.
"""
