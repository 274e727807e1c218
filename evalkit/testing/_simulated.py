"""evalkit serve's simulated judge inside this process, for a block of code: judged work offline with no restart."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["simulated_api"]

_VARIABLES = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


@contextlib.contextmanager
def simulated_api(**judge: Any) -> Iterator[Any]:
    """Run the block against a local server whose judge is evalkit serve's simulated one.

    A `LocalAnthropicServer` (``simulated=True``) starts on a free loopback port, and ``ANTHROPIC_BASE_URL`` and
    ``ANTHROPIC_API_KEY`` point at it until the block ends (then they are as they were). Judged checks, calibration
    with ``judge_all`` and ``Run.ab`` then work with no key and bill nothing; every verdict names itself
    ``simulated-judge``, and the response cache keeps its answers apart from Claude's (the server's address is
    part of each key). `judge` goes to `SimulatedJudge` (``overlap``, planted biases, ``rules``, ``seed``).

    >>> from evalkit.testing import simulated_api
    >>> with simulated_api() as server:
    ...     os.environ["ANTHROPIC_BASE_URL"] == server.base_url
    True
    """
    from evalkit.testing.server import LocalAnthropicServer, SimulatedJudge

    saved = {name: os.environ.get(name) for name in _VARIABLES}
    with LocalAnthropicServer(judge=SimulatedJudge(**judge), simulated=True) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        os.environ["ANTHROPIC_API_KEY"] = "simulated"
        os.environ.pop("ANTHROPIC_AUTH_TOKEN", None)
        try:
            yield server
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
