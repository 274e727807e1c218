"""One (case, repeat): the system's output, graded, as the result the journal records."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any

from evalkit._cache import MESSAGES_ENDPOINT, cache_key
from evalkit._hashing import output_hash
from evalkit._results import CaseResult, CheckResult, case_status, error_kind
from evalkit._runner._context import Raised, RunContext
from evalkit._systems import ClaudeSystem, PythonSystem, backend_for, run_python_system, tool_output
from evalkit.errors import clip
from evalkit.graders import CheckOutcome, JudgeGrade, grade_case
from evalkit.suite import Case

Writes = list[Callable[[], None]]


class _NotCached(Exception):
    """A cache-only execution met a request the response cache cannot answer: nothing was called or recorded."""


def execute_case(
    ctx: RunContext,
    case: Case,
    repeat: int,
    run_id: str,
    *,
    writes: Writes | None = None,
    cache_only: bool = False,
) -> CaseResult:
    """One (case, repeat): the system's output, graded.

    With `writes`, the new response's cache entry is not written but appended there as a callable, for the
    caller to write before it hands the result on. With `cache_only`, a Claude system's request that the cache
    cannot answer raises _NotCached instead of being sent."""
    base: dict[str, Any] = {
        "run_id": run_id,
        "suite": ctx.suite.name,
        "suite_version": ctx.suite.version,
        "case_id": case.id,
        "slice": case.slice,
        "split": case.split,
        "repeat": repeat,
        "system": ctx.system.name,
        "system_model": ctx.system.model,
    }
    pending = writes if writes is not None else []
    hashed: str | None = None
    try:
        if isinstance(ctx.system, PythonSystem):
            output, base["latency_s"] = _run_python(ctx, ctx.system, case, repeat)
            if ctx.system.free:
                base["cost_usd"] = 0.0
            hashed = _json_output_hash(output, ctx.system.name)
            output = _as_recorded(output)
        else:
            output, call, hit = call_claude(ctx, ctx.system, case, repeat, pending, cache_only=cache_only)
            base.update(
                system_model_version=call.model,
                request_id=call.request_id,
                input_tokens=call.input_tokens,
                output_tokens=call.output_tokens,
                cache_read_tokens=call.cache_read_input_tokens,
                cache_write_tokens=call.cache_creation_input_tokens,
                cost_usd=call.cost_usd,
                latency_s=call.latency_s,
                cache_hit=hit,
            )
    except _NotCached:
        raise
    # no output (a system's sys.exit too): an error, never a pass or a fail
    except (Exception, SystemExit) as exc:
        return CaseResult(status="error", **_errored(case, exc), **base)
    outcomes = grade_case(
        case,
        output,
        ctx.grading,
        judge=ctx.judge_for(repeat),
        skip_judge_when=ctx.suite.config.skip_judge_when,
    )
    checks = [_check_result(o) for o in outcomes]
    result = CaseResult(
        status=case_status(checks),
        output=output,
        output_hash=hashed if hashed is not None else _safe_hash(output),
        checks=checks,
        **base,
    )
    if writes is None:  # written here, after the result is made: one that fails keeps the call's cost
        try:
            for write in pending:
                write()
        except Exception as exc:  # e.g. the disk filled up: an error, run again on resume
            return as_error(result, case, exc)
    return result


def _run_python(ctx: RunContext, system: PythonSystem, case: Case, repeat: int) -> tuple[Any, float]:
    """A Python system's output and latency: what a batch's judge phase got from it, or a run now."""
    prefilled = ctx.prefilled.pop((case.id, repeat), None)
    if prefilled is not None:
        output, latency = prefilled
        if isinstance(output, Raised):
            raise output.exc
        return output, latency
    started = time.perf_counter()
    output = run_python_system(system, case, ctx.suite)
    return output, time.perf_counter() - started


def call_claude(
    ctx: RunContext,
    system: ClaudeSystem,
    case: Case,
    repeat: int,
    writes: Writes | None = None,
    *,
    cache_only: bool = False,
) -> tuple[Any, Any, bool]:
    """(output, call result, whether it was a cache hit) for one Claude request, from the cache or the API
    (never the API with `cache_only`: _NotCached)."""
    from evalkit._client import CallResult  # the SDK loads only for a run that calls Claude

    if system.tools or case.user_turns:
        return _tool_loop(ctx, system, case, repeat, writes, cache_only=cache_only)
    request = system.build_request(case.input)
    key = cache_key(MESSAGES_ENDPOINT, request, repeat)
    entry = ctx.cache.get(key, label=f"case {case.id} repeat {repeat}")
    if entry is not None:
        result = CallResult.from_cache_entry(
            entry, requested_model=system.model, structured=system.output_schema is not None
        )
        return system.parse_output(result.text, result.json), result, not ctx.cache.paid_for(entry)
    if cache_only:
        raise _NotCached(key)
    result = ctx.client.create(request)
    meta = result.cache_meta(case_id=case.id)

    def write() -> None:
        ctx.cache.put(key, MESSAGES_ENDPOINT, request, repeat, result.message, meta=meta, verify=False)

    if writes is None:
        write()
    else:
        writes.append(write)
    return system.parse_output(result.text, result.json), result, False


def _tool_loop(
    ctx: RunContext, system: ClaudeSystem, case: Case, repeat: int, writes: Writes | None, *, cache_only: bool
) -> tuple[Any, Any, bool]:
    """The conversation loop: each model turn one request (through the response cache); each tool_use block
    answered from the case's recorded results; after each reply the case's next scripted user turn, if any. A user
    turn may take `max_turns` model turns. The output records the final reply (and each reply, with scripted
    turns) and every call; the call result adds up the turns' tokens, cost and time."""
    from evalkit._client import CallResult

    backend = backend_for(case, ctx.suite)
    request = system.build_request(case.input)
    scripted = list(case.user_turns)
    results: list[Any] = []
    replies: list[str] = []
    every_hit = True
    stopped: str | None = "max_turns"  # until the model answers the last user turn
    turn = since_user = 0
    while since_user < system.max_turns:
        turn += 1
        since_user += 1
        key = cache_key(MESSAGES_ENDPOINT, request, repeat)
        entry = ctx.cache.get(key, label=f"case {case.id} repeat {repeat} turn {turn}")
        content: list[dict[str, Any]] = []
        if entry is not None:
            result = CallResult.from_cache_entry(entry, requested_model=system.model, structured=False)
            every_hit = every_hit and not ctx.cache.paid_for(entry)
            write = None
        else:
            if cache_only:
                raise _NotCached(key)
            result = ctx.client.create(request)
            every_hit = False
            write = functools.partial(
                ctx.cache.put,
                key,
                MESSAGES_ENDPOINT,
                request,
                repeat,
                result.message,
                meta=result.cache_meta(case_id=case.id, turn=turn),
                verify=False,
            )
        results.append(result)
        content = [
            {k: v for k, v in block.items() if v is not None}
            for block in result.message.get("content", [])
            if isinstance(block, dict)
        ]
        uses = [b for b in content if b.get("type") == "tool_use"] if result.stop_reason == "tool_use" else []
        goes_on = bool(uses) or bool(scripted)
        if write is not None:
            if writes is None or goes_on:
                write()  # a turn the loop goes on from is kept now: a stop before the answer must not lose it
            else:
                writes.append(write)
        if uses:
            answers = [
                {
                    "type": "tool_result",
                    "tool_use_id": use.get("id"),
                    "content": json.dumps(
                        backend.answer(str(use.get("name")), use.get("input", {})), ensure_ascii=False
                    ),
                }
                for use in uses
            ]
            follow: dict[str, Any] = {"role": "user", "content": answers}
        else:
            replies.append(result.text.strip())
            if not scripted:
                stopped = None
                break
            follow, since_user = {"role": "user", "content": scripted.pop(0)}, 0
        turns = [*request["messages"], {"role": "assistant", "content": content}, follow]
        request = {**request, "messages": turns}
    costs = [r.cost_usd for r in results]
    total = results[-1].model_copy(
        update={
            "input_tokens": sum(r.input_tokens for r in results),
            "output_tokens": sum(r.output_tokens for r in results),
            "cache_creation_input_tokens": sum(r.cache_creation_input_tokens for r in results),
            "cache_read_input_tokens": sum(r.cache_read_input_tokens for r in results),
            "latency_s": sum(r.latency_s for r in results),
            "cost_usd": None if None in costs else sum(c for c in costs if c is not None),
        }
    )
    output = tool_output(replies[-1] if replies and stopped is None else "", backend.calls, stopped)
    if case.user_turns:
        output["replies"] = replies
    return output, total, every_hit


def prefill_output(ctx: RunContext, case: Case, repeat: int) -> tuple[bool, Any]:
    """(found, output) for a batch's judge phase, before the run grades: never a call to the API.

    A Claude system's output comes from the cache only (not found when its batch did not answer it: the run
    then calls it and judges it live). A Python system runs once here, and ``execute_case`` uses what it gave,
    so a pipeline with costs or side effects is not run twice. Raises what the system raised."""
    system = ctx.system
    if isinstance(system, PythonSystem):
        started = time.perf_counter()
        try:
            output = run_python_system(system, case, ctx.suite)
        # execute_case records what it raised as the case's error, without running it again
        except (Exception, SystemExit) as exc:
            ctx.prefilled[(case.id, repeat)] = (Raised(exc), time.perf_counter() - started)
            raise
        ctx.prefilled[(case.id, repeat)] = (output, time.perf_counter() - started)
        try:
            return True, _as_recorded(output)  # graded as execute_case will grade it
        except (TypeError, ValueError):
            return False, None  # not JSON: execute_case makes it an error result
    assert isinstance(system, ClaudeSystem)
    from evalkit._client import CallResult

    entry = ctx.cache.get(cache_key(MESSAGES_ENDPOINT, system.build_request(case.input), repeat))
    if entry is None:
        return False, None
    result = CallResult.from_cache_entry(
        entry, requested_model=system.model, structured=system.output_schema is not None
    )
    return True, system.parse_output(result.text, result.json)


def _errored(case: Case, exc: BaseException) -> dict[str, Any]:
    """The error and per-check error verdicts of a case whose output could not be had (or kept)."""
    message = f"{type(exc).__name__}: {exc}"
    # the cache's own CacheError is a cache_write (it wraps what the disk said); anything else is not the cache's
    kind = error_kind(exc, "system_exception")
    checks = [
        CheckResult(
            index=i,
            kind=c.kind,
            name=c.label,
            field=c.field,
            tier=c.tier,
            status="error",
            error=message,
            error_kind=kind,
        )
        for i, c in enumerate(case.checks)
    ]
    return {"error": message, "error_kind": kind, "checks": checks}


def as_error(result: CaseResult, case: Case, exc: BaseException) -> CaseResult:
    """`result` turned into an error result (its call's cost and ids kept): its cache entry could not be written."""
    return result.model_copy(
        update={"status": "error", "output": None, "output_hash": None, **_errored(case, exc)}
    )


def _as_recorded(output: Any) -> Any:
    """A Python system's output as the journal records it, so it is graded as recorded: a tuple is a list, a
    dict's int keys are strings. Raises TypeError/ValueError for what is not JSON."""
    if isinstance(output, dict | list | tuple):
        return json.loads(json.dumps(output, ensure_ascii=False, allow_nan=False))
    return output


def _json_output_hash(output: Any, system: str) -> str:
    """The output's hash; a TypeError saying what to return if the output is not a JSON value."""
    try:
        return output_hash(output)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{system} returned {type(output).__name__} {clip(repr(output), 80)}, which is not a JSON value "
            f"({exc}); return a str, number, bool or None, or lists and dicts of them"
        ) from None


def _safe_hash(output: Any) -> str | None:
    try:
        return output_hash(output)
    except (TypeError, ValueError):
        return None


def _check_result(o: CheckOutcome) -> CheckResult:
    chk = o.check
    data: dict[str, Any] = {
        "index": o.index,
        "kind": chk.kind,
        "name": chk.label,
        "field": chk.field,
        "tier": chk.tier,
        "status": o.status,
        "passed": o.passed,
        "skipped_reason": o.skipped_reason,
        "error": o.error,
        "error_kind": o.error_kind,
    }
    g = o.grade
    if g is not None:
        data.update(score=g.score, detail=g.detail)
        if isinstance(g, JudgeGrade):
            data.update(
                judge_model=g.model,
                judge_model_version=g.model_version,
                judge_reasoning=g.reasoning,
                judge_criteria=g.criteria,
                judge_input_tokens=g.input_tokens,
                judge_output_tokens=g.output_tokens,
                judge_cost_usd=g.cost_usd,
                judge_latency_s=g.latency_s,
                judge_cache_hit=g.cache_hit,
            )
    return CheckResult(**data)
