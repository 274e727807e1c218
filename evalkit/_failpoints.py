"""Named points where the fault-injection tests stop the process, to show a crash there loses nothing.

``EVALKIT_FAILPOINT=NAME`` makes the process kill itself (SIGKILL) the first time it reaches the point NAME;
``NAME@N`` the Nth time; ``NAME=ENOSPC`` (or any errno name) raises that ``OSError`` there instead, as a full or
read-only disk would. The variable is read once, at import; unset (always, outside those tests), a point costs a
comparison with None.

The points: ``run:started`` (run directory and manifest made, no case run), ``case:journalled`` (a case's line
written to the journal), ``cache:written`` (a response's cache entry written, before it is renamed into place),
``finish:started`` (every case journalled, before the journal is compacted), ``finish:parquet`` (results.parquet
written, the manifest not yet complete), ``publish:file`` (a file of a run published to a store, its manifest
not yet).
"""

from __future__ import annotations

import errno
import os
import signal
import threading

_SPEC = os.environ.get("EVALKIT_FAILPOINT") or None
_lock = threading.Lock()
_seen: dict[str, int] = {}


def _parse(spec: str) -> tuple[str, int, str | None]:
    name, _, action = spec.partition("=")
    name, _, nth = name.partition("@")
    return name, int(nth or 1), action or None


_WANTED = _parse(_SPEC) if _SPEC else None


def reached(name: str) -> None:
    """Stop here if the fault-injection tests asked for this point (see the module's docstring)."""
    if _WANTED is None or _WANTED[0] != name:
        return
    with _lock:
        _seen[name] = _seen.get(name, 0) + 1
        if _seen[name] != _WANTED[1]:
            return
    action = _WANTED[2]
    if action is None:
        os.kill(os.getpid(), signal.SIGKILL)
        return
    code = getattr(errno, action)
    raise OSError(code, f"{os.strerror(code)} (EVALKIT_FAILPOINT {_SPEC})")
