"""Reasons to stop a run early: every case left would fail the same way, so the run stops with the fix.

They never leave the runner: it catches each and raises an ``EvalkitError`` with its advice instead."""

from __future__ import annotations

import os
from pathlib import Path

from evalkit._results import CaseResult

# connection failures with no call answered yet, after which a run stops rather than retrying every case
UNREACHABLE_AFTER = 8


class _StopRun(Exception):
    """Every case left would fail the same way: the run stops, saying how to fix it and resume."""

    def advice(self, then: str) -> str:
        """What went wrong and how to fix it, ending with `then`: the command that carries on."""
        raise NotImplementedError


class _AuthFailure(_StopRun):
    """A call was refused for its credentials."""

    def advice(self, then: str) -> str:
        return (
            f"authentication failed ({self}); set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server, or "
            f"--cache replay for a committed cache), then: {then}"
        )


class _BatchFailure(_StopRun):
    """The Message Batches API refused or failed a request the batch run needed."""

    def advice(self, then: str) -> str:
        return (
            f"the Message Batches API failed ({self}); once it answers again: {then} "
            "(any batch already submitted is collected, not paid for again)"
        )


class _Unreachable(_StopRun):
    """The first calls of a run all failed to connect."""

    def advice(self, then: str) -> str:
        from evalkit._client import redact_url

        where = redact_url(os.environ.get("ANTHROPIC_BASE_URL")) or "the Anthropic API"
        return (
            f"could not connect to {where}: the first {UNREACHABLE_AFTER} calls failed after their retries "
            f"({self}); check ANTHROPIC_BASE_URL, any proxy and the network, then: {then}"
        )


def cache_write_error(result: CaseResult) -> str | None:
    """The error of a response (the system's or a judge's) that was paid for but could not be cached."""
    errors = [(result.error, result.error_kind)] + [(c.error, c.error_kind) for c in result.checks]
    return next((e for e, kind in errors if e is not None and kind == "cache_write"), None)


class _CacheWriteFailure(_StopRun):
    """A response could not be written to the cache (read-only, or full): every case left would be paid, then lost."""

    def advice(self, then: str) -> str:
        return f"the run stopped at the first response it could not cache: {self}. Once it can be written: {then}"


class _JournalWriteFailure(_StopRun):
    """A result could not be appended to the run's journal (the disk is full, or the folder read-only)."""

    def __init__(self, path: Path, exc: OSError) -> None:
        super().__init__(f"cannot write the run's journal {path}: {exc.strerror or exc}")

    def advice(self, then: str) -> str:
        return f"{self}. What was journalled is kept; once there is room (or it is writable): {then}"


def money_error(result: CaseResult) -> tuple[str, str] | None:
    """(kind, error) of a call a result shows was stopped for money: not sent under the run's spending cap
    (``spending_cap``), or refused by the API at the account's spend limit (``spend_limit``)."""
    errors = [(result.error, result.error_kind)] + [(c.error, c.error_kind) for c in result.checks]
    return next(
        ((kind, e) for e, kind in errors if e is not None and kind in ("spending_cap", "spend_limit")), None
    )


class _SpendingCapReached(_StopRun):
    """The next call's worst case would have passed the run's spending cap: nothing more is sent."""

    spent_usd = cap_usd = per_case_usd = 0.0
    left = 0
    """Filled in by the runner, which knows the cap and what is left."""

    def advice(self, then: str) -> str:
        # a cap that leaves room for what is left at the rate so far, with a margin, rounded up to a cent
        needed = self.spent_usd + self.left * self.per_case_usd * 1.25
        higher = max(self.cap_usd * 1.5, needed)
        return (
            f"the run stopped at its spending cap: ${self.spent_usd:.4f} spent of ${self.cap_usd:.2f}, and the "
            f"next call could have passed it ({self}). Nothing more was sent; {self.left} case(s) are left. "
            f"To finish, raise the cap: {then} --max-cost {higher:.2f}"
        )


class _SpendLimit(_StopRun):
    """The API refused a call: the account's spend limit is reached (waiting within the run will not lift it)."""

    def advice(self, then: str) -> str:
        return (
            f"the API refused a call because the account's spend limit is reached ({self}); nothing more was sent. "
            f"Raise the limit in the Anthropic Console (Settings > Limits) or wait until it resets, then: {then}"
        )
