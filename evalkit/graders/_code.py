"""Code graders: deterministic checks of facts, formats, arithmetic, citations and policy invariants."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from evalkit.errors import CaseDefect, CheckTimeout
from evalkit.graders._base import Grade, GradingContext, as_structured, as_text, is_missing
from evalkit.graders._limits import LIMIT_HINT, findall, search, seconds
from evalkit.graders._normalize import parse_number
from evalkit.graders._registry import grades
from evalkit.graders._worker import CAN_FORK, call_user_check
from evalkit.suite import (
    Case,
    CitationsSubsetCheck,
    ContainsAllCheck,
    ContainsNoneCheck,
    JsonValidCheck,
    MaxWordsCheck,
    MinWordsCheck,
    NoEmailExceptCheck,
    RegexCheck,
    SqlRowsMatchCheck,
    SumsCheck,
    UserCheck,
)

_WS = re.compile(r"\s+")
_WORD = re.compile(r"\S+")
EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}")


def _from_input(read: Any, case_input: Any) -> Any:
    try:
        return read(case_input)
    except ValueError as exc:
        raise CaseDefect(f"{exc} (evalkit validate reports this with the case's line)") from None


def _fold(text: str) -> str:
    return _WS.sub(" ", text.casefold())


def _missing(check: Any) -> Grade:
    return Grade(passed=False, score=0.0, detail=f"output has no field {check.field!r}")


@grades(ContainsAllCheck)
def grade_contains_all(check: ContainsAllCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    if is_missing(value):
        return _missing(check)
    facts = _from_input(check.facts_in, case.input)
    text = _fold(as_text(value))
    missing: list[str] = []
    for fact in facts:
        options = [fact] if isinstance(fact, str) else fact
        if not any(_fold(o) in text for o in options):
            missing.append(options[0] if len(options) == 1 else " | ".join(options))
    found = len(facts) - len(missing)
    score = found / len(facts)
    if missing:
        return Grade(passed=False, score=score, detail="missing: " + "; ".join(repr(m) for m in missing))
    return Grade(passed=True, score=1.0, detail=f"all {len(facts)} facts present")


@grades(ContainsNoneCheck)
def grade_contains_none(check: ContainsNoneCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    if is_missing(value):
        return _missing(check)
    text = _fold(as_text(value))
    present = [p for p in check.phrases if _fold(p) in text]
    if present:
        return Grade(passed=False, score=0.0, detail="contains: " + "; ".join(repr(p) for p in present))
    return Grade(passed=True, score=1.0, detail=f"none of {len(check.phrases)} phrases present")


@grades(RegexCheck)
def grade_regex(check: RegexCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    if is_missing(value):
        return _missing(check)
    match = search(check.pattern, as_text(value), flags=check.flags, limit=ctx.check_timeout_s)
    if match is None:
        ok = not check.must_match
        detail = f"no match for /{check.pattern}/" + ("" if check.must_match else ", as required")
    else:
        ok = check.must_match
        detail = f"matched {match.group(0)!r}" if ok else f"must not match, but found {match.group(0)!r}"
    return Grade(passed=ok, score=1.0 if ok else 0.0, detail=detail)


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


@grades(MaxWordsCheck, MinWordsCheck)
def grade_words(check: MaxWordsCheck | MinWordsCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    if is_missing(value):
        return _missing(check)
    n = word_count(as_text(value))
    if isinstance(check, MaxWordsCheck):
        ok = n <= check.limit
        detail = f"{n} words; at most {check.limit} allowed"
    else:
        ok = n >= check.limit
        detail = f"{n} words; at least {check.limit} required"
    return Grade(passed=ok, score=1.0 if ok else 0.0, detail=detail)


@grades(JsonValidCheck)
def grade_json_valid(check: JsonValidCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    if is_missing(value):
        return _missing(check)
    if not isinstance(value, str):
        return Grade(passed=True, score=1.0, detail="already structured JSON")
    try:
        json.loads(value)
    except json.JSONDecodeError as exc:
        return Grade(
            passed=False, score=0.0, detail=f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        )
    return Grade(passed=True, score=1.0, detail="valid JSON")


def _num(obj: Any, key: str) -> Decimal | None:
    return parse_number(obj.get(key)) if isinstance(obj, dict) else None


@grades(SumsCheck)
def grade_sums(check: SumsCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    """Line items multiply out (quantity x unit price = amount) and, with adjustments, add up to the total."""
    if is_missing(value):
        return _missing(check)
    data = as_structured(value)
    if not isinstance(data, dict):
        return Grade(
            passed=False,
            score=0.0,
            detail=f"expected an object with {check.items!r}, got {type(data).__name__}",
        )
    items = data.get(check.items) or []
    if not isinstance(items, list):
        return Grade(passed=False, score=0.0, detail=f"{check.items!r} is not a list")
    total = _num(data, check.total)
    if not items and total is None:
        return Grade(passed=True, score=1.0, detail="no line items and no total: nothing to add up")
    tol = Decimal(str(check.tolerance))
    problems: list[str] = []
    running = Decimal(0)
    for i, item in enumerate(items):
        qty, price, amount = (
            _num(item, check.quantity),
            _num(item, check.unit_price),
            _num(item, check.amount),
        )
        if qty is not None and price is not None:
            product = qty * price
            if amount is not None and abs(product - amount) > tol:
                problems.append(f"item {i}: {qty} x {price} = {product}, but amount is {amount}")
            running += amount if amount is not None else product
        elif amount is not None:
            running += amount
        else:
            problems.append(f"item {i}: no amount and no quantity x unit price")
    for key in check.add:
        running += _num(data, key) or Decimal(0)
    for key in check.subtract:
        running -= abs(_num(data, key) or Decimal(0))
    if total is None:
        problems.append(f"no {check.total!r} to check against (items add up to {running})")
    elif abs(running - total) > tol:
        adj = "".join(f" + {k}" for k in check.add) + "".join(f" - {k}" for k in check.subtract)
        problems.append(f"items{adj} = {running}, but {check.total} is {total}")
    for key in check.included:
        # already inside the item amounts (VAT-inclusive prices): not added, but it must fit inside the total
        part = data.get(key)
        amount = _num(data, key)
        if part is None:
            continue
        if amount is None:
            problems.append(f"{key} is {part!r}, not a number")
        elif total is not None and abs(amount) > abs(total) + tol:
            problems.append(f"{key} ({amount}) is included in {check.total}, but is larger than it ({total})")
    if problems:
        return Grade(passed=False, score=0.0, detail="; ".join(problems))
    return Grade(
        passed=True, score=1.0, detail=f"{len(items)} items add up to {total} within {check.tolerance}"
    )


@grades(CitationsSubsetCheck)
def grade_citations_subset(check: CitationsSubsetCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    """Every cited id must be one the retriever returned."""
    if is_missing(value):
        return _missing(check)
    allowed = _from_input(check.retrieved_in, case.input)
    if isinstance(value, list):
        cited = [str(v) for v in value]
    else:
        found = findall(check.pattern, as_text(value), limit=ctx.check_timeout_s)
        cited = [c if isinstance(c, str) else c[0] for c in found]
    cited = list(dict.fromkeys(cited))
    if not cited:
        if check.require_citation:
            return Grade(passed=False, score=0.0, detail="no citation, but one is required")
        return Grade(passed=True, score=1.0, detail="no citations")
    barred = set(check.must_not_cite)
    stray = [c for c in cited if c not in allowed or c in barred]
    problems = []
    forbidden = [c for c in cited if c in barred]
    if forbidden:
        problems.append(f"cites ids it must not: {', '.join(forbidden)}")
    unknown = [c for c in cited if c not in allowed and c not in barred]
    if unknown:
        problems.append(
            f"cites ids not retrieved: {', '.join(unknown)} (retrieved: {', '.join(allowed) or 'none'})"
        )
    if stray:
        return Grade(passed=False, score=(len(cited) - len(stray)) / len(cited), detail="; ".join(problems))
    return Grade(passed=True, score=1.0, detail=f"all {len(cited)} cited ids were retrieved")


@grades(NoEmailExceptCheck)
def grade_no_email_except(check: NoEmailExceptCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    if is_missing(value):
        return _missing(check)
    allowed = {a.casefold() for a in _from_input(check.allowed_in, case.input)}
    found = list(dict.fromkeys(m.rstrip(".") for m in EMAIL.findall(as_text(value))))
    bad = [e for e in found if e.casefold() not in allowed]
    if bad:
        return Grade(passed=False, score=0.0, detail="email address(es) not allowed: " + ", ".join(bad))
    return Grade(passed=True, score=1.0, detail=f"{len(found)} email address(es), all allowed")


_SQL_FENCE = re.compile(r"```(?:sql)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def _connect(fixture: Path) -> sqlite3.Connection:
    if fixture.suffix == ".sql":
        conn = sqlite3.connect(":memory:")
        conn.executescript(fixture.read_text(encoding="utf-8"))
        return conn
    return sqlite3.connect(f"file:{fixture}?mode=ro", uri=True)


@grades(SqlRowsMatchCheck)
def grade_sql_rows_match(check: SqlRowsMatchCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    """The candidate query returns the reference query's rows (as a multiset unless `ordered`)."""
    if is_missing(value):
        return _missing(check)
    sql = as_text(value)
    fenced = _SQL_FENCE.search(sql)
    if fenced:
        sql = fenced.group(1)
    sql = sql.strip().rstrip(";")
    if not re.match(r"(?is)^\s*(select|with)\b", sql):
        return Grade(passed=False, score=0.0, detail="the candidate is not a SELECT query")
    base_dir = ctx.base_dir
    fixture = base_dir / check.fixture
    if not fixture.exists():
        return Grade(passed=False, score=0.0, detail=f"fixture {check.fixture!r} not found under {base_dir}")
    limit = ctx.check_timeout_s
    conn = _connect(fixture)
    deadline = time.monotonic() + limit
    if limit > 0:
        # a recursive CTE can count for ever: SQLite asks this every 10,000 steps, and stops on True
        conn.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
    try:
        try:
            want = conn.execute(check.reference_sql).fetchall()
        except sqlite3.Error:
            if limit > 0 and time.monotonic() > deadline:
                raise CheckTimeout(
                    f"the reference query ran past {seconds(limit)} and was stopped: make it end on the fixture"
                ) from None
            raise
        deadline = time.monotonic() + limit
        try:
            got = conn.execute(sql).fetchall()
        except sqlite3.Error as exc:
            if limit > 0 and time.monotonic() > deadline:
                raise CheckTimeout(
                    f"the candidate query ran past {seconds(limit)} and was stopped (a query that does not end "
                    f"on the fixture is wrong); if it is right but slow, {LIMIT_HINT}"
                ) from None
            return Grade(passed=False, score=0.0, detail=f"the candidate query failed: {exc}")
    finally:
        conn.close()
    same = got == want if check.ordered else Counter(got) == Counter(want)
    if same:
        return Grade(passed=True, score=1.0, detail=f"{len(got)} rows match the reference")
    return Grade(
        passed=False,
        score=0.0,
        detail=f"returned {len(got)} rows; the reference returns {len(want)}, and they differ",
    )


@grades(UserCheck)
def grade_user(check: UserCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    """Run a suite's registered check; it may return a bool, (bool, detail) or a Grade."""
    from evalkit.suite import global_checks

    fn = ctx.user.lookup(check.name) if ctx.user else None
    if fn is None:
        fn = global_checks().get(check.name)
    if fn is None:
        return Grade(passed=False, score=0.0, detail=f"user check {check.name!r} is not registered")
    if is_missing(value):
        return _missing(check)
    if ctx.check_timeout_s > 0 and CAN_FORK:
        family = [*(ctx.user.checks.values() if ctx.user else ()), *global_checks().values()]
        result = call_user_check(
            check.name, fn, value, case, check.params, limit=ctx.check_timeout_s, family=family
        )
    else:
        result = fn(value, case, **check.params)
    if isinstance(result, Grade):
        return result
    if isinstance(result, tuple) and len(result) == 2:
        ok, detail = bool(result[0]), str(result[1])
        return Grade(passed=ok, score=1.0 if ok else 0.0, detail=detail)
    if isinstance(result, bool):
        return Grade(passed=result, score=1.0 if result else 0.0, detail="passed" if result else "failed")
    raise TypeError(
        f"user check {check.name!r} returned {type(result).__name__}; return bool, (bool, str) or Grade"
    )
