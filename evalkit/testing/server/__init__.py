"""A local Anthropic-compatible HTTP server for tests and offline work."""

from evalkit.testing.server._server import (
    FAULT_KINDS,
    PINNED_MODEL_IDS,
    FaultKind,
    FaultPlan,
    LocalAnthropicServer,
    Reply,
    RequestRecord,
    Responder,
    count_input_tokens,
    estimate_tokens,
    example_from_schema,
    last_user_text,
    main,
)

__all__ = [
    "FAULT_KINDS",
    "PINNED_MODEL_IDS",
    "FaultKind",
    "FaultPlan",
    "LocalAnthropicServer",
    "Reply",
    "RequestRecord",
    "Responder",
    "count_input_tokens",
    "estimate_tokens",
    "example_from_schema",
    "last_user_text",
    "main",
]
