"""Message Batches: fill the response cache through the Batches API, then let the ordinary run read it.

A batched run has up to two phases before grading: the system's uncached requests, then the judge's uncached
requests for the outputs that passed their cheaper checks. Each phase's batch id is saved in the run manifest
as soon as it exists, so an interrupted run resumes by collecting that batch instead of submitting a new one.
Custom ids are cache keys, so results land in the cache whatever order they come back in.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from evalkit._cache import MESSAGES_ENDPOINT, cache_key
from evalkit._results import Manifest, RunDir
from evalkit._runner._context import RunContext
from evalkit._runner._execute import prefill_output
from evalkit._systems import ClaudeSystem
from evalkit.errors import CallError
from evalkit.graders import Grade, Judge, grade_case
from evalkit.suite import Case, JudgeCheck


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


@dataclass
class BatchPhase:
    name: str
    submitted: int = 0
    cached: int = 0
    failed: int = 0
    batch_id: str | None = None


def _log(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr)


def _collect_batch(
    ctx: RunContext,
    phase: str,
    pending: dict[str, tuple[dict[str, Any], int, str]],
    manifest: Manifest,
    run: RunDir,
    poll: Callable[[float], None] | None = None,
) -> BatchPhase:
    """Submit (or resume) one batch for `pending` (key -> (request, repeat, case id)), wait, and cache results.

    A resumed run first collects the batch its manifest names; what that batch did not answer (its errors, or
    the whole batch when the API no longer knows it) goes into a new batch. Requests that a new batch did not
    answer are reported, and the run sends them directly."""
    result = BatchPhase(phase)
    quiet = not ctx.options.progress
    saved = manifest.batch_ids.get(phase)
    if saved is not None:
        _log(f"{phase}: resuming batch {saved}", quiet)
        try:
            answered, _ = _wait_and_cache(ctx, saved, pending, poll)
        except CallError as exc:
            if exc.status != 404:
                raise
            print(
                f"{phase}: the API no longer knows batch {saved} ({exc.message}); sending its requests again",
                file=sys.stderr,
            )
            answered = set()
        result.batch_id = saved
        result.cached += len(answered)
        pending = {key: item for key, item in pending.items() if key not in answered}
    if not pending:
        return result
    batch_id = ctx.client.submit_batch([(key, request) for key, (request, _, _) in pending.items()])
    manifest.batch_ids[phase] = batch_id
    run.write_manifest(manifest)  # before waiting: an interrupted run must find this batch again
    result.submitted, result.batch_id = len(pending), batch_id
    _log(f"{phase}: submitted batch {batch_id} with {len(pending)} requests", quiet)
    answered, failures = _wait_and_cache(ctx, batch_id, pending, poll)
    result.cached += len(answered)
    result.failed = len(pending) - len(answered)
    if result.failed:
        kinds = sorted({f.kind for f in failures})
        first = failures[0] if failures else None
        why = f": {', '.join(kinds)}, e.g. {first}" if first is not None else ""
        print(
            f"{phase}: batch {batch_id} did not answer {result.failed} of {len(pending)} requests{why}; the run "
            "sends them directly, at the standard price",
            file=sys.stderr,
        )
    return result


def _wait_and_cache(
    ctx: RunContext,
    batch_id: str,
    pending: dict[str, tuple[dict[str, Any], int, str]],
    poll: Callable[[float], None] | None,
) -> tuple[set[str], list[Any]]:
    """Wait for a batch to end and cache its answers to `pending`: (the keys answered, the errors of the rest)."""
    client = ctx.client
    ctx.cache.paid_batches.add(batch_id)  # its responses are this run's spending when read back
    interval = ctx.options.batch_poll_s
    while not client.batch_status(batch_id).ended:
        (poll or _sleep)(interval)
        interval = min(interval * 1.5, 60.0)  # back off: batches take minutes to hours
    requests = {key: request for key, (request, _, _) in pending.items()}
    answered: set[str] = set()
    failures: list[Any] = []
    for key, outcome in client.batch_results(batch_id, requests=requests or None).items():
        if key not in pending:
            continue  # already cached by an earlier attempt, or not ours
        request, repeat, case_id = pending[key]
        if isinstance(outcome, Exception):
            failures.append(outcome)
            continue
        meta = outcome.cache_meta(case_id=case_id, batch_id=batch_id)
        ctx.cache.put(key, MESSAGES_ENDPOINT, request, repeat, outcome.message, meta=meta)
        answered.add(key)
    return answered, failures


def _system_pending(
    ctx: RunContext, todo: Iterable[tuple[Case, int]]
) -> dict[str, tuple[dict[str, Any], int, str]]:
    pending: dict[str, tuple[dict[str, Any], int, str]] = {}
    if not isinstance(ctx.system, ClaudeSystem):
        return pending
    for case, repeat in todo:
        request = ctx.system.build_request(case.input)
        key = cache_key(MESSAGES_ENDPOINT, request, repeat)
        if ctx.cache.get(key) is None:
            pending[key] = (request, repeat, case.id)
    return pending


def _judge_pending(
    ctx: RunContext, todo: Iterable[tuple[Case, int]]
) -> dict[str, tuple[dict[str, Any], int, str]]:
    """Judge requests the run will make: outputs come from the (now filled) cache, cheap checks run first."""
    judge = ctx.judge
    pending: dict[str, tuple[dict[str, Any], int, str]] = {}
    if not isinstance(judge, Judge):
        return pending
    for case, repeat in todo:
        if not any(isinstance(c, JudgeCheck) for c in case.checks):
            continue
        try:
            found, output = prefill_output(ctx, case, repeat)
        except (Exception, SystemExit):
            continue  # the ordinary run records the system's error
        if not found:
            continue  # the system's batch did not answer it: the run calls and judges it directly

        def collect(check: JudgeCheck, value: Any, case: Case, _repeat: int = repeat) -> Grade:
            request = judge.build_request(check, value, case)
            key = cache_key(MESSAGES_ENDPOINT, request, _repeat)
            if ctx.cache.get(key) is None:
                pending[key] = (request, _repeat, case.id)
            # the verdict is not known until the batch comes back: read as a pass here, so the case's later
            # judge checks are collected too (a collecting judge that failed would block them, as an error does)
            return Grade(passed=True)

        grade_case(case, output, ctx.grading, judge=collect, skip_judge_when=ctx.suite.config.skip_judge_when)
    return pending


def prefill(
    ctx: RunContext, todo: list[tuple[Case, int]], manifest: Manifest, run: RunDir
) -> list[BatchPhase]:
    """Run the system phase, then the judge phase, through the Batches API; the cache holds the results."""
    phases = [_collect_batch(ctx, "system", _system_pending(ctx, todo), manifest, run)]
    phases.append(_collect_batch(ctx, "judge", _judge_pending(ctx, todo), manifest, run))
    return phases
