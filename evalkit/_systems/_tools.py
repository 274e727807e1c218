"""A case's tool backend: each call a system makes answered from the case's recorded tool results, and recorded.

The claude system's tool-use loop and a Python system that takes ``tools`` both call through one of these, so a
case reproduces: the same calls get the same results, offline, on every run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from evalkit.errors import CaseDefect


def _includes(arguments: Any, wanted: dict[str, Any]) -> bool:
    return isinstance(arguments, dict) and all(arguments.get(k, object()) == v for k, v in wanted.items())


class ToolBackend:
    """Answers tool calls for one case; `calls` records each (name, arguments, result) in order.

    `functions` are the suite's tools.py functions (``def lookup_order(arguments, case)``), called for what the
    case's recorded results do not answer, each within `limit` seconds in a worker process as user checks are
    (0: in this process, no limit)."""

    def __init__(
        self, case: Any, functions: Mapping[str, Callable[..., Any]] | None = None, limit: float = 0
    ) -> None:
        self.case = case
        self.functions = dict(functions or {})
        self.limit = limit
        self.calls: list[dict[str, Any]] = []

    def answer(self, name: str, arguments: Any) -> Any:
        """The recorded result for this call: the first entry for `name` whose arguments the call includes, else
        the entry for `name` without arguments (the fallback). A call nothing answers is a defect of the case."""
        recorded = self.case.tool_results
        fallback = None
        for entry in recorded:
            if entry.tool != name:
                continue
            if entry.arguments is None:
                fallback = entry if fallback is None else fallback
            elif _includes(arguments, entry.arguments):
                return self._recorded(name, arguments, entry.result)
        if fallback is not None:
            return self._recorded(name, arguments, fallback.result)
        fn = self.functions.get(name)
        if fn is not None:
            return self._recorded(name, arguments, self._call(name, fn, arguments))
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)[:200]
        raise CaseDefect(
            f"case {self.case.id}: the system called {name}({shown}) and no tool_results entry of the case answers "
            f'it; add {{"tool": "{name}", "arguments": {{...}}, "result": ...}} to its tool_results (or one without '
            "arguments, answering any call of that tool), or define it in the suite's tools.py"
        )

    def _call(self, name: str, fn: Callable[..., Any], arguments: Any) -> Any:
        from evalkit.graders import CAN_FORK, call_user_check

        if self.limit > 0 and CAN_FORK:
            family = self.functions.values()
            return call_user_check(
                f"tools.py {name}", fn, arguments, self.case, {}, limit=self.limit, family=family
            )
        return fn(arguments, self.case)

    def _recorded(self, name: str, arguments: Any, result: Any) -> Any:
        self.calls.append({"name": name, "arguments": arguments, "result": result})
        return result

    __call__ = answer


def backend_for(case: Any, suite: Any) -> ToolBackend:
    """The tool backend of `case` in `suite` (its tools.py and time limit)."""
    if suite is None:
        return ToolBackend(case)
    return ToolBackend(case, suite.tool_functions(), suite.config.check_timeout_s)


def tool_output(text: str, calls: list[dict[str, Any]], stopped: str | None = None) -> dict[str, Any]:
    """What a tool-using system's output records: its final reply and every call in order."""
    out: dict[str, Any] = {"text": text, "tool_calls": calls}
    if stopped is not None:
        out["stopped"] = stopped
    return out


def run_python_system(system: Any, case: Any, suite: Any = None) -> Any:
    """A Python system's output for `case`: a function taking ``tools`` gets the case's backend, and its calls
    join its output (a reply string becomes ``{"text": ..., "tool_calls": [...]}``)."""
    if not system.takes_tools:
        return system.fn(case.input)
    backend = backend_for(case, suite)
    output = system.fn(case.input, backend)
    if isinstance(output, dict):
        return output if "tool_calls" in output else {**output, "tool_calls": backend.calls}
    return tool_output("" if output is None else str(output), backend.calls)
