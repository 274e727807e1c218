"""A case's tool backend: each call a system makes answered from the case's recorded tool results, and recorded.

The claude system's tool-use loop and a Python system that takes ``tools`` both call through one of these, so a
case reproduces: the same calls get the same results, offline, on every run.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.errors import CaseDefect


def _includes(arguments: Any, wanted: dict[str, Any]) -> bool:
    return isinstance(arguments, dict) and all(arguments.get(k, object()) == v for k, v in wanted.items())


class ToolBackend:
    """Answers tool calls for one case; `calls` records each (name, arguments, result) in order."""

    def __init__(self, case: Any) -> None:
        self.case = case
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
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)[:200]
        raise CaseDefect(
            f"case {self.case.id}: the system called {name}({shown}) and no tool_results entry of the case answers "
            f'it; add {{"tool": "{name}", "arguments": {{...}}, "result": ...}} to its tool_results (or one without '
            "arguments, answering any call of that tool)"
        )

    def _recorded(self, name: str, arguments: Any, result: Any) -> Any:
        self.calls.append({"name": name, "arguments": arguments, "result": result})
        return result

    __call__ = answer


def tool_output(text: str, calls: list[dict[str, Any]], stopped: str | None = None) -> dict[str, Any]:
    """What a tool-using system's output records: its final reply and every call in order."""
    out: dict[str, Any] = {"text": text, "tool_calls": calls}
    if stopped is not None:
        out["stopped"] = stopped
    return out


def run_python_system(system: Any, case: Any) -> Any:
    """A Python system's output for `case`: a function taking ``tools`` gets the case's backend, and its calls
    join its output (a reply string becomes ``{"text": ..., "tool_calls": [...]}``)."""
    if not system.takes_tools:
        return system.fn(case.input)
    backend = ToolBackend(case)
    output = system.fn(case.input, backend)
    if isinstance(output, dict):
        return output if "tool_calls" in output else {**output, "tool_calls": backend.calls}
    return tool_output("" if output is None else str(output), backend.calls)
