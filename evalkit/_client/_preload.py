"""The SDK imported in a background thread, while the caller loads its suite and prepares its run.

Importing the SDK takes about 0.7 s of a command that calls Claude, most of it before the first request could go
out. ``preload`` starts that import early; ``wait_for_preload`` joins it, and must be called before the process
forks (a fork while another thread holds an import lock would leave the child waiting on it for good).
"""

from __future__ import annotations

import contextlib
import threading

__all__ = ["preload", "wait_for_preload"]

_lock = threading.Lock()
_thread: threading.Thread | None = None


def _import() -> None:
    with contextlib.suppress(Exception):  # an import that fails fails again, and says why, where it is used
        import evalkit._client._client  # noqa: F401


def preload() -> None:
    """Start importing the SDK (and evalkit's client) in a daemon thread; a no-op if started already."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_import, daemon=True, name="evalkit-sdk-import")
            _thread.start()


def wait_for_preload() -> None:
    """Wait for a preload started by ``preload`` to finish (at once when none was started)."""
    with _lock:
        thread = _thread
    if thread is not None:
        thread.join()
