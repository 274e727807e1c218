"""Why a call failed: the error kinds and the one exception a call raises (no SDK needed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

ErrorKind = Literal[
    "rate_limit",
    "overloaded",
    "server",
    "connection",
    "timeout",
    "bad_response",
    "auth",
    "bad_request",
    "canceled",
    "expired",
]
"""Why a call failed. ``canceled`` and ``expired`` only come from Message Batches results."""

RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limit", "overloaded", "server", "connection", "timeout", "bad_response"}
)


class CallError(Exception):
    """A call that failed after retries: ``kind`` (see ``ErrorKind``), HTTP ``status`` when there was one,
    a ``message`` (never holding the API key) and the API's ``request_id`` when it sent one."""

    def __init__(
        self,
        kind: ErrorKind,
        status: int | None = None,
        message: str = "",
        request_id: str | None = None,
    ) -> None:
        self.kind: ErrorKind = kind
        self.status = status
        self.message = message
        self.request_id = request_id
        super().__init__(self._summary())

    def _summary(self) -> str:
        status = f" {self.status}" if self.status is not None else ""
        rid = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.kind}{status}: {self.message}{rid}"

    @property
    def retryable(self) -> bool:
        """Whether trying the same request again later could succeed."""
        return self.kind in RETRYABLE_KINDS

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "status": self.status,
            "message": self.message,
            "request_id": self.request_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallError:
        return cls(
            kind=cast(ErrorKind, data["kind"]),
            status=data.get("status"),
            message=str(data.get("message", "")),
            request_id=data.get("request_id"),
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind, self.status, self.message, self.request_id))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallError) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.kind, self.status, self.message, self.request_id))


def _status_kind(status: int) -> ErrorKind:
    """The kind of an API error answered with HTTP ``status``."""
    if status == 429:
        return "rate_limit"
    if status == 529:
        return "overloaded"
    if status in (401, 403):
        return "auth"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server"
    return "bad_request"


# the API's error types and the HTTP status each is answered with on a direct call
_ERROR_TYPE_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def _errored_kind(error: Any) -> tuple[ErrorKind, int | None]:
    """A batch item's error type as the kind and status the same error has on a direct call.

    A type this module does not know is a ``bad_request`` (never retried: trying again could pay twice).
    """
    status = _ERROR_TYPE_STATUS.get(str(error))
    if status is None:
        return "bad_request", None
    return _status_kind(status), status
