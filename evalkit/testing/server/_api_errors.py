"""API errors: the exception the handlers raise and the error shape the API answers with."""

from __future__ import annotations

from typing import Any

__all__ = ["error_payload", "error_type_for"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class _RequestError(Exception):
    """An API error answered to the client (400, 404, ...); the server answers every one, so none leaves it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_type_for(status: int) -> str:
    """The API's error ``type`` for an HTTP status."""
    return _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def error_payload(status: int, message: str, request_id: str | None) -> dict[str, Any]:
    """``{"type": "error", "error": {...}, "request_id": ...}``, as the API sends it."""
    return {
        "type": "error",
        "error": {"type": error_type_for(status), "message": message},
        "request_id": request_id,
    }
