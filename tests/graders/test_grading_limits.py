"""Grading cannot hang: a regex, user check or candidate query past its limit is that check's error."""

from __future__ import annotations

import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.graders import GradingContext, grade_case, grade_check
from evalkit.graders._worker import _idle, stop_workers
from evalkit.suite import Case, load_user_module, parse_case

LIMIT = 0.5


def case_with(*checks: dict[str, Any], input: Any = "q") -> Case:
    case, problems = parse_case({"id": "t", "input": input, "checks": list(checks)})
    assert not problems and case is not None, problems
    return case


def grade1(check: dict[str, Any], output: Any, ctx: GradingContext) -> Any:
    case = case_with(check)
    return grade_check(case.checks[0], output, case, ctx)


def timed(case: Case, output: Any, ctx: GradingContext) -> tuple[list[Any], float]:
    start = time.monotonic()
    outcomes = grade_case(case, output, ctx)
    return outcomes, time.monotonic() - start


# regex --------------------------------------------------------------------------------------------------------


def test_nested_repeat_on_35_characters_gets_a_verdict_quickly() -> None:
    # under re this backtracks 2**34 times; the regex engine sees through it, and the limit is there regardless
    case = case_with({"kind": "regex", "pattern": "^(a+)+$"})
    (outcome,), took = timed(case, "a" * 34 + "!", GradingContext(check_timeout_s=LIMIT))
    assert outcome.status == "fail" and took < LIMIT + 5


def test_a_catastrophic_regex_is_that_checks_error_and_the_case_goes_on() -> None:
    case = case_with(
        {"kind": "regex", "pattern": "^(a|a)+$"},
        {"kind": "max_words", "limit": 5},
    )
    (slow, words), took = timed(case, "a" * 35 + "!", GradingContext(check_timeout_s=LIMIT))
    assert slow.status == "error" and words.status == "pass"
    assert (slow.error or "").startswith("regex check timed out after 0.5 s: simplify the pattern /^(a|a)+$/")
    assert "check_timeout_s" in (slow.error or "")
    assert took < LIMIT + 5  # not for ever (a loaded machine is slow to stop it)


def test_a_catastrophic_citation_pattern_times_out_too() -> None:
    case = case_with({"kind": "citations_subset", "retrieved": ["a"], "pattern": "((a|a)+)!"})
    (outcome,), _ = timed(case, "a" * 40, GradingContext(check_timeout_s=LIMIT))
    assert outcome.status == "error" and "citation pattern timed out" in (outcome.error or "")


@pytest.mark.parametrize(
    ("pattern", "flags", "text"),
    [
        (r"\bref(und)?s?\b", "i", "Your REFUND is on its way"),
        (r"^total:\s*(\d+[.,]\d{2})$", "m", "items\ntotal: 12,50\n"),
        (r"a.b", "s", "a\nb"),
        (r"(?P<id>[A-Z]-\d) \d", "x", "A-12"),
        (r"[^\w\s]", "", "ok."),
        (r"(?<=\$)\d+", "", "cost $40"),
        (r"colou?r(?!ful)", "", "colourful color"),
    ],
)
def test_regex_checks_mean_what_they_meant_under_re(pattern: str, flags: str, text: str) -> None:
    want = re.search(
        pattern, text, sum(getattr(re, {"i": "I", "m": "M", "s": "S", "x": "X"}[f]) for f in flags)
    )
    g = grade1({"kind": "regex", "pattern": pattern, "flags": flags}, text, GradingContext())
    assert want is not None and g.passed and g.detail == f"matched {want.group(0)!r}"


def test_no_limit_when_the_suite_sets_zero() -> None:
    case = case_with({"kind": "regex", "pattern": "^(a|a)+$"})
    (outcome,), _ = timed(case, "a" * 18 + "!", GradingContext(check_timeout_s=0))
    assert outcome.status == "fail"  # slow (2**18 steps) but allowed to finish


# user checks --------------------------------------------------------------------------------------------------


@pytest.fixture
def user(tmp_path: Path) -> Any:
    path = tmp_path / "checks.py"
    path.write_text(
        "import os, sys, time, threading\n"
        "import evalkit\n\n"
        "@evalkit.check('ok')\n"
        "def ok(value, case, want='x'):\n"
        "    return value == want, f'got {value!r}'\n\n"
        "@evalkit.check('spin')\n"
        "def spin(value, case):\n"
        "    while True:\n"
        "        pass\n\n"
        "@evalkit.check('sleep')\n"
        "def sleep(value, case):\n"
        "    time.sleep(3600)\n\n"
        "@evalkit.check('quit')\n"
        "def quit(value, case):\n"
        "    os._exit(0)\n\n"
        "@evalkit.check('exit')\n"
        "def exit_(value, case):\n"
        "    sys.exit(3)\n\n"
        "@evalkit.check('raise')\n"
        "def raise_(value, case):\n"
        "    raise ValueError('broken invariant')\n\n"
        "@evalkit.check('lock')\n"
        "def lock(value, case):\n"
        "    return True, threading.Lock()\n\n"
        "@evalkit.check('pid')\n"
        "def pid(value, case):\n"
        "    return True, str(os.getpid())\n\n"
        "@evalkit.check('mutate')\n"
        "def mutate(value, case):\n"
        "    value.append('changed')\n"
        "    return True\n",
        encoding="utf-8",
    )
    return load_user_module(path)


def test_a_looping_user_check_is_that_checks_error_and_the_next_one_runs(user: Any) -> None:
    case = case_with({"kind": "user", "name": "spin"}, {"kind": "user", "name": "ok"})
    (spin, ok), took = timed(case, "x", GradingContext(user=user, check_timeout_s=LIMIT))
    assert spin.status == "error" and ok.status == "pass"
    assert (spin.error or "").startswith("user check 'spin' timed out after 0.5 s: it was stopped")
    assert took < LIMIT + 5  # not for ever (a loaded machine is slow to stop it)


def test_a_sleeping_user_check_is_stopped_and_its_worker_replaced(user: Any) -> None:
    ctx = GradingContext(user=user, check_timeout_s=LIMIT)
    pids = {grade1({"kind": "user", "name": "pid"}, "x", ctx).detail for _ in range(3)}
    assert len(pids) == 1  # one worker serves call after call
    (first,) = pids
    (outcome,), _ = timed(case_with({"kind": "user", "name": "sleep"}), "x", ctx)
    assert outcome.status == "error" and "timed out" in (outcome.error or "")
    after = {grade1({"kind": "user", "name": "pid"}, "x", ctx).detail for _ in range(2)}
    assert first not in after and len(after) == 1
    with pytest.raises(ProcessLookupError):
        os.kill(int(first), 0)  # the stopped worker is gone, not left running


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("quit", "user check 'quit': it ended its worker process with os._exit(0)"),
        ("exit", "SystemExit: 3"),
        ("raise", "ValueError: broken invariant"),
        ("lock", "user check 'lock' returned a tuple that cannot be sent back from its worker process"),
    ],
)
def test_what_a_user_check_does_wrong_is_its_error(user: Any, name: str, said: str) -> None:
    case = case_with({"kind": "user", "name": name}, {"kind": "user", "name": "ok"})
    bad, ok = grade_case(case, "x", GradingContext(user=user))
    assert bad.status == "error" and (bad.error or "").startswith(said), bad.error
    assert ok.status == "pass"


def test_params_and_detail_come_back_from_the_worker(user: Any) -> None:
    case = case_with({"kind": "user", "name": "ok", "params": {"want": "y"}})
    g = grade_check(case.checks[0], "x", case, GradingContext(user=user))
    assert not g.passed and g.detail == "got 'x'"


def test_a_check_gets_a_copy_of_the_output(user: Any) -> None:
    output = ["as returned"]
    case = case_with({"kind": "user", "name": "mutate"})
    assert grade_check(case.checks[0], output, case, GradingContext(user=user)).passed
    assert output == ["as returned"]


def test_zero_runs_user_checks_in_this_process(user: Any) -> None:
    case = case_with({"kind": "user", "name": "pid"})
    g = grade_check(case.checks[0], "x", case, GradingContext(user=user, check_timeout_s=0))
    assert g.detail == str(os.getpid())


def test_a_check_registered_after_a_worker_started_gets_a_worker_that_knows_it(user: Any) -> None:
    ctx = GradingContext(user=user)
    case = case_with({"kind": "user", "name": "ok"})
    assert grade_check(case.checks[0], "x", case, ctx).passed  # a worker is forked now

    @evalkit.check("registered_later_test")
    def later(value: Any, case: Case) -> tuple[bool, str]:
        return True, "later"

    case = case_with({"kind": "user", "name": "registered_later_test"})
    assert grade_check(case.checks[0], "x", case, ctx).detail == "later"


def test_threads_share_the_workers(user: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    stop_workers()
    ctx = GradingContext(user=user)
    case = case_with({"kind": "user", "name": "ok"})
    with ThreadPoolExecutor(4) as pool:
        grades = list(pool.map(lambda _: grade_check(case.checks[0], "x", case, ctx), range(40)))
    assert all(g.passed for g in grades)
    assert 1 <= len(_idle) <= 4


# sql and deep outputs -----------------------------------------------------------------------------------------


def test_a_candidate_query_that_never_ends_is_stopped(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "shop.db")
    conn.execute("create table t(x int)")
    conn.commit()
    conn.close()
    case = case_with({"kind": "sql_rows_match", "fixture": "shop.db", "reference_sql": "select x from t"})
    endless = "with recursive c(n) as (select 1 union all select n + 1 from c) select count(*) from c"
    (outcome,), took = timed(case, endless, GradingContext(base_dir=tmp_path, check_timeout_s=LIMIT))
    assert outcome.status == "error" and "candidate query ran past 0.5 s" in (outcome.error or "")
    assert took < LIMIT + 5  # not for ever (a loaded machine is slow to stop it)


def test_a_very_deep_json_output_is_a_check_error_with_a_hint() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    case = case_with(
        {"kind": "exact", "field": "label", "expected": "x"},
        {"kind": "json_valid"},
        {"kind": "regex", "pattern": r"^\[+"},
    )
    exact, valid, text = grade_case(case, deep, GradingContext())
    assert exact.status == "error" and (exact.error or "").startswith("the output is nested deeper than it")
    assert "regex or user check on the whole output" in (exact.error or "")
    assert valid.status == "error" and "RecursionError" in (valid.error or "")
    assert text.status == "pass"
