"""Reasons to stop a run early: every case left would fail the same way, so the run stops with the fix."""

from __future__ import annotations

import os

# connection failures with no call answered yet, after which a run stops rather than retrying every case
UNREACHABLE_AFTER = 8


class StopRun(Exception):
    """Every case left would fail the same way: the run stops, saying how to fix it and resume."""

    def advice(self, then: str) -> str:
        """What went wrong and how to fix it, ending with `then`: the command that carries on."""
        raise NotImplementedError


class AuthFailure(StopRun):
    """A call was refused for its credentials."""

    def advice(self, then: str) -> str:
        return (
            f"authentication failed ({self}); set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server, or "
            f"--cache replay for a committed cache), then: {then}"
        )


class BatchFailure(StopRun):
    """The Message Batches API refused or failed a request the batch run needed."""

    def advice(self, then: str) -> str:
        return (
            f"the Message Batches API failed ({self}); once it answers again: {then} "
            "(any batch already submitted is collected, not paid for again)"
        )


class Unreachable(StopRun):
    """The first calls of a run all failed to connect."""

    def advice(self, then: str) -> str:
        where = os.environ.get("ANTHROPIC_BASE_URL") or "the Anthropic API"
        return (
            f"could not connect to {where}: the first {UNREACHABLE_AFTER} calls failed after their retries "
            f"({self}); check ANTHROPIC_BASE_URL, any proxy and the network, then: {then}"
        )
