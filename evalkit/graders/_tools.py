"""Checks on the tool calls an output records: called (with which arguments), not called, in order, how many.

An output records its calls as ``{"tool_calls": [{"name": ..., "arguments": {...}, "result": ...}, ...], ...}``
(``input`` is read as ``arguments`` too, as the Messages API names a tool_use block's), or is that list itself.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.graders._base import Grade, GradingContext
from evalkit.graders._registry import grades
from evalkit.suite import (
    Case,
    MaxToolCallsCheck,
    ToolCalledCheck,
    ToolNotCalledCheck,
    ToolSequenceCheck,
)

_NO_CALLS = (
    'no tool calls in the output: record them as {"tool_calls": [{"name": ..., "arguments": {...}}]} '
    "or return that list"
)


def tool_calls(value: Any) -> list[tuple[str, Any]] | None:
    """(name, arguments) of each call an output records, in order; None when it records none."""
    calls = value.get("tool_calls") if isinstance(value, dict) else value
    if not isinstance(calls, list):
        return None
    out = []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return None
        out.append((call["name"], call.get("arguments", call.get("input", {}))))
    return out


def _shown(name: str, arguments: Any) -> str:
    return f"{name}({json.dumps(arguments, ensure_ascii=False, sort_keys=True)[:200]})"


def _verdict(ok: bool, detail: str) -> Grade:
    return Grade(passed=ok, score=1.0 if ok else 0.0, detail=detail)


def _arguments_fit(check: ToolCalledCheck, arguments: Any) -> str | None:
    """Why the arguments do not fit the check (None: they fit)."""
    if check.arguments is not None:
        if not isinstance(arguments, dict):
            return "its arguments are not an object"
        if check.match == "exact" and arguments != check.arguments:
            return "its arguments are not exactly the expected ones"
        wrong = [k for k, v in check.arguments.items() if arguments.get(k, object()) != v]
        if wrong:
            return f"{', '.join(sorted(wrong))} differ"
    if check.arguments_schema is not None:
        import jsonschema

        errors = list(jsonschema.Draft202012Validator(check.arguments_schema).iter_errors(arguments))
        if errors:
            where = ".".join(str(p) for p in errors[0].absolute_path)
            return f"its arguments do not fit the schema: {where + ': ' if where else ''}{errors[0].message}"
    return None


@grades(ToolCalledCheck)
def grade_tool_called(check: ToolCalledCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    calls = tool_calls(value)
    if calls is None:
        return _verdict(False, _NO_CALLS)
    named = [(n, a) for n, a in calls if n == check.tool]
    if not named:
        made = ", ".join(n for n, _ in calls) or "none"
        return _verdict(False, f"{check.tool} was not called (calls: {made})")
    why = [_arguments_fit(check, a) for _, a in named]
    if None in why:
        return _verdict(True, f"{_shown(*named[why.index(None)])} called")
    return _verdict(False, f"{check.tool} was called {len(named)} time(s), never as expected: {why[0]}")


@grades(ToolNotCalledCheck)
def grade_tool_not_called(check: ToolNotCalledCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    calls = tool_calls(value)
    if calls is None:
        return _verdict(False, _NO_CALLS)
    named = [(n, a) for n, a in calls if n == check.tool]
    if named:
        return _verdict(False, f"{check.tool} was called: {_shown(*named[0])}")
    return _verdict(True, f"{check.tool} was not called ({len(calls)} call(s) in all)")


@grades(ToolSequenceCheck)
def grade_tool_sequence(check: ToolSequenceCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    calls = tool_calls(value)
    if calls is None:
        return _verdict(False, _NO_CALLS)
    names = [n for n, _ in calls]
    made = " -> ".join(names) or "none"
    if check.strict:
        ok = names == list(check.tools)
    else:  # in order, with other calls allowed between them
        it = iter(names)
        ok = all(any(n == wanted for n in it) for wanted in check.tools)
    wanted = " -> ".join(check.tools)
    how = "exactly" if check.strict else "in order"
    return _verdict(ok, f"calls {made}; {'' if ok else 'not '}{how} {wanted}")


@grades(MaxToolCallsCheck)
def grade_max_tool_calls(check: MaxToolCallsCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    calls = tool_calls(value)
    if calls is None:
        return _verdict(False, _NO_CALLS)
    counted = [n for n, _ in calls if check.tool is None or n == check.tool]
    noun = "call" if len(counted) == 1 else "calls"
    what = f"{noun} to {check.tool}" if check.tool else f"tool {noun}"
    return _verdict(len(counted) <= check.limit, f"{len(counted)} {what}; at most {check.limit} allowed")
