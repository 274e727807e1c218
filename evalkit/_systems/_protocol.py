"""What a system under test is to the runner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class System(Protocol):
    """A system under test, as the runner sees it.

    A system produces one output per case input in one of two ways: a :class:`CallsFunction` is called with the
    input; a :class:`SendsRequest` gives the messages request for it, which the runner sends through the cached
    client, and reads the answer back with ``parse_output``."""

    @property
    def name(self) -> str:
        """What the run's manifest and every result row record, and what ``--resume`` loads again."""
        ...

    @property
    def model(self) -> str | None:
        """The model it calls, when it is one model (None for a Python function)."""
        ...

    @property
    def free(self) -> bool:
        """Whether it makes no paid calls, so its cost is a known zero rather than unknown."""
        ...

    def describe(self) -> dict[str, Any]:
        """What it is, as plain JSON: a resume refuses a system whose description changed."""
        ...


@runtime_checkable
class CallsFunction(System, Protocol):
    """A system whose output is ``fn(input)``."""

    @property
    def fn(self) -> Callable[[Any], Any]: ...


@runtime_checkable
class SendsRequest(System, Protocol):
    """A system whose output is Claude's answer to ``build_request(input)``."""

    def build_request(self, case_input: Any) -> dict[str, Any]: ...

    def parse_output(self, text: str, parsed_json: Any = None) -> Any: ...
