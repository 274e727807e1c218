"""Each finished (case, repeat) journalled and counted, and the run stopped when the rest would fail alike."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._results import CaseResult, Journal
from evalkit._runner._stops import (
    UNREACHABLE_AFTER,
    _AuthFailure,
    _CacheWriteFailure,
    _JournalWriteFailure,
    _SpendingCapReached,
    _SpendLimit,
    _Unreachable,
    cache_write_error,
    money_error,
)


@dataclass
class RunTotals:
    """Live counters for the progress bar and the summary."""

    done: int = 0
    errors: int = 0
    cache_hits: int = 0
    spent_usd: float = 0.0
    unknown_cost: int = 0
    answered: int = 0
    """Calls this session made that got a reply (cache hits are not calls)."""
    unreachable: int = 0
    """Cases that ended in a connection error."""


class Recorder:
    """Journals each result, then counts it, tells `on_result` and moves the progress bar."""

    def __init__(
        self,
        journal: Journal,
        journal_path: Path,
        totals: RunTotals,
        bar: Any = None,
        on_result: Callable[[CaseResult], None] | None = None,
    ) -> None:
        self.journal = journal
        self._journal_path = journal_path
        self.totals = totals
        self._bar = bar
        self._on_result = on_result

    def record(self, result: CaseResult) -> None:
        """Raises a _StopRun when the result shows that every case left would fail the same way."""
        try:
            self.journal.append(result)
        except OSError as exc:
            raise _JournalWriteFailure(self._journal_path, exc) from None
        t = self.totals
        unkept = cache_write_error(result)
        if unkept is not None:
            # journalled, with what it cost; every case after it would be paid for and lost the same way
            raise _CacheWriteFailure(unkept.removeprefix("CacheError: "))
        money = money_error(result)
        if money is not None:  # journalled as an error (resume runs it again); nothing more is sent
            kind, error = money
            raise (_SpendingCapReached if kind == "spending_cap" else _SpendLimit)(
                error.removeprefix(f"CallError: {kind}: ")
            )
        if result.status == "error":
            # every other case would fail the same way: stop now, with the fix, not after N error results
            error = result.error or ""
            if result.error_kind == "auth":
                raise _AuthFailure(error)
            if result.error_kind == "connection":
                t.unreachable += 1
                if not t.answered and t.unreachable >= UNREACHABLE_AFTER:
                    raise _Unreachable(error)
        elif result.input_tokens is not None and not result.cache_hit:
            t.answered += 1
        t.done += 1
        t.errors += result.status == "error"
        t.cache_hits += result.cache_hit
        for cost, hit, replied in [(result.cost_usd, result.cache_hit, result.input_tokens is not None)] + [
            (c.judge_cost_usd, bool(c.judge_cache_hit), c.judge_input_tokens is not None)
            for c in result.checks
            if c.judge_model
        ]:
            if hit or not replied:  # a call that ended in an error was not answered, so not charged
                continue
            if cost is None:
                t.unknown_cost += 1
            else:
                t.spent_usd += cost
        if self._on_result is not None:
            self._on_result(result)
        if self._bar is not None:
            self._bar.set_postfix_str(
                f"hits={t.cache_hits} errors={t.errors} ${t.spent_usd:.4f}", refresh=False
            )
            self._bar.update(1)


def progress_bar(total: int, initial: int, desc: str, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm  # loaded only for a run that shows it

    # in a terminal or a notebook the bar moves; in a CI log every redraw is kept, so redraw every 30 s there
    live = sys.stderr.isatty() or "ipykernel" in sys.modules
    return tqdm(
        total=total,
        initial=initial,
        desc=desc,
        unit="case",
        dynamic_ncols=True,
        mininterval=0.2 if live else 30.0,
    )
