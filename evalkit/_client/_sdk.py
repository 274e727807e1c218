"""Process-wide SDK set-up: the shared TLS context, the tracing option, and warm-up before a fork."""

from __future__ import annotations

import contextlib
import inspect
import json
import socket
import ssl
import threading
from typing import Any

import anthropic
import httpx2

_tls_lock = threading.Lock()
_tls: ssl.SSLContext | None = None


def tls_context() -> ssl.SSLContext:
    """The process's TLS context, made once and shared by every SDK client it builds.

    Making one reads the CA bundle, about 20 ms of CPU: once per client otherwise, paid again by each worker
    process at the start of a run. A context made before a fork serves the forked copies too.
    """
    global _tls
    with _tls_lock:
        if _tls is None:
            # honours SSL_CERT_FILE and SSL_CERT_DIR, as the SDK's own would
            _tls = httpx2.create_ssl_context()
        return _tls


def _tracing_option() -> dict[str, Any]:
    """``open_telemetry=False`` for SDK clients made while no OpenTelemetry tracer provider is set up.

    The SDK builds a span for every call, with its attributes, even when nothing records it: about 0.1 ms of CPU
    per call (measured), 12% of a call's handling. Where a provider is set up, or the environment names one,
    the SDK's own setting stands and the calls are traced.
    """
    if "open_telemetry" not in inspect.signature(anthropic.Anthropic).parameters:
        return {}
    try:
        from opentelemetry import trace
    except ImportError:
        return {}
    try:
        provider = trace.get_tracer_provider()
    except Exception:  # a provider named by the environment that cannot load: the SDK traces nothing either
        return {"open_telemetry": False}
    return {"open_telemetry": False} if isinstance(provider, trace.ProxyTracerProvider) else {}


_warmed_up = False

_WARM_UP_REPLY = {
    "id": "msg_warm_up",
    "type": "message",
    "role": "assistant",
    "model": "warm-up",
    "content": [{"type": "text", "text": ""}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 0, "output_tokens": 0},
}


def warm_up() -> None:
    """Do the first-use work of this process's SDK clients now (once): the TLS context, one call's lazy imports.

    The call goes through the SDK's whole request path but never leaves the process: an in-memory transport
    answers it. A runner calls this before it forks worker processes, so that each copy starts with it done;
    otherwise every worker's first calls wait on the same imports (tracing propagators read package metadata,
    about 10 ms) while the first wave of cases is held up.
    """
    global _warmed_up
    if _warmed_up:
        return
    tls_context()
    with contextlib.suppress(OSError):
        # a host name is encoded with the idna codec, imported on first use: 17 threads that each opened their
        # first connection at once all waited on that import (100 ms of a worker's first wave, measured)
        socket.getaddrinfo("localhost", None)
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, json=_WARM_UP_REPLY))
    http = anthropic.DefaultHttpxClient(transport=transport)
    sdk = anthropic.Anthropic(
        api_key="warm-up", base_url="http://warm-up.invalid", http_client=http, max_retries=0
    )
    try:
        raw = sdk.messages.with_raw_response.create(
            model="warm-up", max_tokens=1, messages=[{"role": "user", "content": "warm-up"}]
        )
        json.loads(raw.http_response.content)
        _ = sdk.messages.batches
    finally:
        sdk.close()
    _warmed_up = True
