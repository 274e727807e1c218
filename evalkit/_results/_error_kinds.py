"""Why a case or check errored, as a kind: the one place error kinds are spelt out and told apart.

A result records its error twice: the message, for people, and ``error_kind``, for code (the runner's stop rules,
the summary's grouping). The kind is taken from the exception when the error is recorded; results journalled
before the field existed get it from their message, which always began with the exception's type name.
"""

from __future__ import annotations

import re
from typing import Final, Literal, cast, get_args

from evalkit.errors import CacheError, CacheMiss, CallError, CallErrorKind, CorruptCacheEntry

ErrorKind = Literal[
    CallErrorKind,
    "system_exception",
    "cache_miss",
    "cache_corrupt",
    "cache_write",
    "check_exception",
    "check_timeout",
    "judge_error",
]
"""Why a case or check errored: a call's kind, or one of the kinds below (see docs/results.md)."""
CALL_ERROR_KINDS: Final[tuple[str, ...]] = get_args(CallErrorKind)
ERROR_KINDS: Final[tuple[str, ...]] = get_args(ErrorKind)
"""Every error kind: a call's kinds first, then system_exception (the system raised, or gave no JSON value),
cache_miss (a replay found no recorded response), cache_corrupt (a replay found a corrupt or edited entry),
cache_write (a paid-for response could not be cached), check_exception (a check raised), check_timeout (a check
ran past its time limit) and judge_error (the judge gave no usable verdict)."""

# the exception type a message starts with (``f"{type(exc).__name__}: {exc}"``) -> its kind
_TYPE_KINDS: Final[dict[str, ErrorKind]] = {
    "CacheError": "cache_write",  # the cache raises CacheError itself only when it cannot write
    "CacheMiss": "cache_miss",
    "CorruptCacheEntry": "cache_corrupt",
    "EditedCacheEntry": "cache_corrupt",
    "JudgeError": "judge_error",
}
_CALL_KIND = re.compile(r"CallError: ([a-z_]+)\b")


def error_kind(exc: BaseException, default: ErrorKind) -> ErrorKind:
    """The kind of an error about to be recorded: a failed call's own kind, a cache's, else `default`.

    Parameters
    ----------
    exc:
        What was raised.
    default:
        The kind of any other exception where it was raised (``system_exception`` for the system's call,
        ``check_exception`` for a check, ``judge_error`` for a judge check).
    """
    if isinstance(exc, CallError):
        return cast(ErrorKind, exc.kind)
    if isinstance(exc, CacheMiss):
        return "cache_miss"
    if isinstance(exc, CorruptCacheEntry):
        return "cache_corrupt"
    if isinstance(exc, CacheError):
        return "cache_write"
    return default


def error_kind_of_message(message: str, default: ErrorKind) -> ErrorKind:
    """The kind of an error recorded without one (results journalled before schema version 2), from its message.

    >>> error_kind_of_message("CallError: auth 401: invalid x-api-key", "system_exception")
    'auth'
    >>> error_kind_of_message("CacheError: Cannot write to the response cache ...", "system_exception")
    'cache_write'
    >>> error_kind_of_message("ValueError: unlucky", "system_exception")
    'system_exception'
    """
    call = _CALL_KIND.match(message)
    if call and call.group(1) in CALL_ERROR_KINDS:
        return cast(ErrorKind, call.group(1))
    return _TYPE_KINDS.get(message.partition(":")[0], default)
