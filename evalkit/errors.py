"""Every exception and warning evalkit lets a user see, and the located problems some of them carry.

Each error is an :class:`EvalkitError`, so ``except evalkit.EvalkitError`` catches whatever evalkit itself
reports, and the ``evalkit`` command prints its message and exits 2. Two are also ``ValueError`` subclasses,
as they were before they joined the tree, so code that catches ``ValueError`` still catches them. Each warning
is an :class:`EvalkitWarning`, a ``UserWarning``. During a run, a check that raises and a call that fails are
not raised to the caller: each is recorded as its check's or case's error (a run stops early, with an
EvalkitError saying how to resume it, only when every case left would fail the same way).

The tree::

    EvalkitError                         anything evalkit reports to a user; also raised as itself
    |
    |   input problems: a file, spec or argument is wrong, and the message says where and what to do
    +-- SuiteValidationError             a suite failed validation; .problems lists every problem found
    |   +-- TranscriptError              a transcript file cannot be read, or its rows cannot be promoted
    +-- RecordsError                     a labels, ratings, verdicts or pairs file has bad lines; .problems
    +-- RulesFileError (ValueError)      the local server's rules file cannot be used
    +-- RemoteSchemaRefused              a JSON Schema's $ref names a URL: schemas are never fetched
    |
    |   run problems
    +-- SystemLoadError                  a system cannot be found, imported or made from what was given
    +-- CacheError                       the cache directory cannot be used (unwritable, missing, a link)
    |   +-- CacheMiss                    replay mode has no recorded response for a request
    |   +-- CorruptCacheEntry            replay mode found a cache file it cannot use
    |       +-- EditedCacheEntry         ... because its response changed after it was recorded
    +-- CallError                        an API call failed after its retries; .kind says why
    +-- SpendingStopped                  a run stopped for money (its max_cost, or the account's spend limit)
    +-- StorageError                     an s3:// store cannot be used (unreachable, no credentials, no bucket,
                                         a refused write, another writer's run): nothing was half-published
    |
    |   grading problems: each is recorded as its check's error during a run
    +-- CheckError                       a check could not give a verdict; its message is the check's error
    |   +-- CheckTimeout                 a check ran past the suite's check_timeout_s
    |   +-- CaseDefect                   the case, not the output, is wrong (a *_from path names nothing)
    |   +-- UserCheckFailed              a user check raised, or its worker process ended
    |   +-- OutputTooDeep                an output is nested deeper than it can be read
    +-- JudgeError                       the judge gave no usable verdict, even after a retry
    |
    |   statistics
    +-- GrainError (ValueError)          check rows given where case verdicts are needed, or the reverse

    EvalkitWarning (UserWarning)         anything evalkit warns a user of
    +-- CorruptCacheEntryWarning         a corrupt or edited cache file is treated as a miss and fetched again
    +-- UnverifiedCacheEntryWarning      an entry recorded before entries carried a digest is used unchecked

This module imports nothing beyond the standard library's lightest: ``import evalkit`` loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "CacheError",
    "CacheMiss",
    "CallError",
    "CallErrorKind",
    "CaseDefect",
    "CheckError",
    "CheckTimeout",
    "CorruptCacheEntry",
    "CorruptCacheEntryWarning",
    "EditedCacheEntry",
    "EvalkitError",
    "EvalkitWarning",
    "GrainError",
    "JudgeError",
    "OutputTooDeep",
    "Problem",
    "RecordsError",
    "RemoteSchemaRefused",
    "RulesFileError",
    "SpendingStopped",
    "StorageError",
    "SuiteValidationError",
    "SystemLoadError",
    "TranscriptError",
    "UnverifiedCacheEntryWarning",
    "UserCheckFailed",
]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, located as precisely as we can."""

    path: str
    line: int | None
    field: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        text = f"{where}: {self.field}: {self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text


def _problems_found(problems: list[Problem]) -> str:
    n = len(problems)
    head = f"{n} problem{'s' if n != 1 else ''} found"
    return head + ":\n" + "\n".join(f"  {p}" for p in problems)


class EvalkitError(Exception):
    """Base class for errors evalkit reports to a user."""


# -- input problems -------------------------------------------------------------------------------------------


class SuiteValidationError(EvalkitError):
    """A suite failed validation; `problems` lists every problem found, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(self._summary())

    def _summary(self) -> str:
        return _problems_found(self.problems)


class TranscriptError(SuiteValidationError):
    """A transcript file could not be read, or rows could not be promoted; `problems` says where and why."""


class RecordsError(EvalkitError):
    """An input file has problems; `problems` lists all of them, not only the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(_problems_found(self.problems))


class RulesFileError(EvalkitError, ValueError):
    """A rules file that cannot be used; the message says where (file:line) and what to do."""


class RemoteSchemaRefused(EvalkitError):
    """A schema referred to a document by URL; evalkit never fetches one."""


# -- run problems ---------------------------------------------------------------------------------------------


class SystemLoadError(EvalkitError):
    """A system could not be found, imported or made from what was given (a spec, a file, an object)."""


class CacheError(EvalkitError):
    """The cache cannot do what was asked (an unwritable directory, a replay miss, a corrupt replay entry)."""


class StorageError(EvalkitError):
    """An object store (``s3://bucket/prefix``) cannot do what was asked; the message names the URL, what the store
    said and what to do. Nothing is half-published: a run's manifest, written last, is never replaced by a
    failed publish."""


class CacheMiss(CacheError):
    """A replay-mode lookup found no entry: the run would need the API, which replay never calls."""

    def __init__(self, key: str, path: Path, label: str | None = None, elsewhere: str | None = None) -> None:
        self.key = key
        self.path = path
        self.label = label
        what = f"{label!r}" if label else f"key {key}"
        if elsewhere is not None:  # the likeliest cause, so it comes first
            super().__init__(
                f"No cached response for {what} (expected at {path}). {elsewhere} The API's address is part "
                "of every cache key, so this cache answers only requests to the server it was recorded "
                "against: set ANTHROPIC_BASE_URL as it was when the cache was recorded, or record again."
            )
            return
        super().__init__(
            f"No cached response for {what} (expected at {path}). The cache is in replay mode, which never "
            "calls the API, and this request has not been recorded; a changed prompt, model, schema or "
            "sampling parameter gives the request a new key. To fix: run once with an API key in readwrite "
            f"mode (the default) to record the response, then commit the cache directory ({path.parent.parent})."
        )


class CorruptCacheEntry(CacheError):
    """A cache file exists but cannot be used. Raised in replay mode; other modes warn and refetch."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(
            f"Corrupt cache entry {path}: {reason}. Delete the file and record it again in readwrite mode, "
            "or restore it from version control."
        )


class EditedCacheEntry(CorruptCacheEntry):
    """A cache file whose response does not match the digest recorded with it: edited after it was written.

    Raised in replay mode; other modes warn (:class:`CorruptCacheEntryWarning`) and fetch the response again."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        CacheError.__init__(self, f"Edited cache entry {path}: {reason}. " + self.fix(path))

    @staticmethod
    def fix(path: Path) -> str:
        """What to do about an edited entry at `path` (the warning of the other modes says it too)."""
        return (
            f"Review the change (git diff -- {path}): if it is not meant, restore the file from version control; "
            "if it is, record the response again instead of editing it (delete the file and run in readwrite "
            "mode, or run with --cache refresh), since an edited response is never replayed."
        )


CallErrorKind = Literal[
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
    "spending_cap",
    "spend_limit",
]
"""Why a call failed. ``canceled`` and ``expired`` only come from Message Batches results; ``spending_cap``: not
sent, as it could have passed the run's ``max_cost``; ``spend_limit``: the API refused it, the account's spend
limit being reached."""

_RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limit", "overloaded", "server", "connection", "timeout", "bad_response"}
)


class CallError(EvalkitError):
    """A call that failed after retries: ``kind`` (see ``CallErrorKind``), HTTP ``status`` when there was one,
    a ``message`` (never holding the API key) and the API's ``request_id`` when it sent one."""

    def __init__(
        self,
        kind: CallErrorKind,
        status: int | None = None,
        message: str = "",
        request_id: str | None = None,
    ) -> None:
        self.kind: CallErrorKind = kind
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
        return self.kind in _RETRYABLE_KINDS

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
            kind=cast(CallErrorKind, data["kind"]),
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


# -- grading problems -----------------------------------------------------------------------------------------


class CheckError(EvalkitError):
    """A check that could not give a verdict; its message is shown as the check's error, as it is."""

    @property
    def shown(self) -> str:
        return str(self)


class CheckTimeout(CheckError):
    """A check ran past its suite's time limit."""


class CaseDefect(CheckError):
    """The case, not the output, is wrong (a *_from path that names nothing): evalkit validate finds these."""


class UserCheckFailed(CheckError):
    """A user check raised, or its worker process ended; the message names the check and what happened."""


class OutputTooDeep(CheckError):
    """An output nested deeper than can be read or graded."""


class JudgeError(EvalkitError):
    """The judge gave no usable verdict, even after a retry."""


# -- statistics -----------------------------------------------------------------------------------------------


class GrainError(EvalkitError, ValueError):
    """A frame of one grain (check rows or case verdicts) given where the other is needed."""


# -- warnings -------------------------------------------------------------------------------------------------


class EvalkitWarning(UserWarning):
    """Base class for warnings evalkit gives a user."""


class CorruptCacheEntryWarning(EvalkitWarning):
    """A corrupt cache file was found and is treated as a miss; the next write replaces it."""


class UnverifiedCacheEntryWarning(EvalkitWarning):
    """An entry recorded before entries carried a digest is used without one (said once per cache object)."""


def clip(text: str, width: int) -> str:
    """`text` cut to at most `width` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


class SpendingStopped(EvalkitError):
    """A run stopped for money: the next call could have passed its ``max_cost``, or the API refused calls at the
    account's spend limit. What finished is kept; the message gives the command that finishes the run (with a
    higher cap). ``evalkit run`` exits 3 for it."""
