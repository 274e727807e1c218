"""Times as the API writes them."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["rfc3339"]


def rfc3339(moment: datetime) -> str:
    """A UTC time as the API writes it (``...Z``)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
