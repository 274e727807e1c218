"""`evalkit init NAME`: a new suite folder that validates and runs, with one case of each form to copy from."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from evalkit.cli._args import EXIT_OK, EXIT_USAGE

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")

_SUITE_TOML = """\
# {name}: what the feature under test does, in one line (shown in reports)
name = "{name}"
description = "Replies to a customer review: thanks them, answers what they raised, never promises money."
default_system = "baseline"   # baseline (baseline.py's predict) | claude (prompt.md through [model])
prompt = "prompt.md"
baseline = "baseline.py"
checks = "checks.py"

[model]                       # how --system claude calls Claude
name = "claude-sonnet-4-6"
max_tokens = 300
temperature = 0.0

[judge]                       # judge checks; a different model from the system's
model = "claude-opus-4-6"
"""

_PROMPT = """\
You reply to customer reviews of a kitchen shop on its behalf.

Write two or three friendly sentences: thank the reviewer, answer what they raised, and never promise a refund,
discount or anything free. The review comes in <review> tags; reply with the text only.
"""

_BASELINE = '''\
"""A rule-based stand-in for the feature, so the suite runs offline: thanks the reviewer, mentions the product."""

from __future__ import annotations

from typing import Any


def predict(input: dict[str, Any]) -> str:
    product = input.get("product", "your order")
    if int(input.get("stars", 5)) <= 2:
        return f"Thank you for your review of the {product}. We are sorry it let you down; please reply with your order number."
    return f"Thank you for your kind review of the {product}! We are glad you enjoy it."
'''

_CHECKS = '''\
"""User checks for this suite: register each with @evalkit.check("name") and use it as {"kind": "user", ...}."""

from __future__ import annotations

from typing import Any

import evalkit


@evalkit.check("thanks_the_reviewer")
def thanks_the_reviewer(value: Any, case: Any, **params: Any) -> tuple[bool, str]:
    """Pass when the reply thanks the reviewer; the detail says what was found."""
    text = str(value).lower()
    found = any(word in text for word in ("thank", "grateful", "appreciate"))
    return found, "thanks the reviewer" if found else "no thanks found"
'''

_SOURCE = "synthetic: written by evalkit init as an example"


def _cases() -> list[dict[str, object]]:
    happy = {"product": "cast-iron pan", "stars": 5, "review": "Heats evenly and cleans up fast. Love it."}
    unhappy = {"product": "kettle", "stars": 1, "review": "The lid broke after a week. I want my money back."}
    return [
        # one grader: the whole output against one expectation
        {"id": "rev-001", "input": happy, "grader": "contains", "expected": ["thank", "pan"],
         "slice": "happy", "source": _SOURCE},
        # one expectation, the quickest form to write
        {"id": "rev-002", "input": happy, "must_contain": ["thank"], "slice": "happy", "source": _SOURCE},
        # checks: several checks, cheapest first; the judge runs only when the cheaper ones pass
        {"id": "rev-003", "input": unhappy, "slice": "unhappy", "source": _SOURCE, "checks": [
            {"kind": "contains_none", "name": "no-money-promised", "phrases": ["refund", "free", "discount"]},
            {"kind": "max_words", "limit": 80},
            {"kind": "user", "name": "thanks_the_reviewer"},
            {"kind": "judge", "name": "reply-quality", "rubric": [
                "Acknowledges the broken lid", "Does not promise a refund or anything free"]},
        ]},
    ]  # fmt: skip


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "init",
        help="make a new suite folder to start from (suite.toml, cases.jsonl, prompt.md, baseline.py, checks.py)",
        description="Write a new suite folder NAME (or --dir PATH) holding suite.toml, cases.jsonl with one case "
        "of each form (one grader, one expectation, checks with a code, a user and a judge check), prompt.md for "
        "--system claude, baseline.py (an offline stand-in) and checks.py (a user check). It validates and runs "
        "as written: `evalkit run NAME`. An existing folder is never written into. Exit 0; 2 on bad input.",
    )
    p.add_argument("name", metavar="NAME", help="the suite's name (letters, digits, '-', '_', '.')")
    p.add_argument("--dir", metavar="PATH", help="where to make it (default: ./NAME)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit._fs import atomic_write_text
    from evalkit.suite import validate_suite

    name = str(args.name)
    if not _NAME.fullmatch(name):
        print(
            f"evalkit init: {name!r} is not a suite name: use letters, digits, '-', '_' or '.'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    folder = Path(args.dir) if args.dir else Path(name)
    if folder.exists():
        print(
            f"evalkit init: {folder} exists; nothing was written (choose another NAME or --dir)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    staging = folder.with_name(f".{folder.name}.init-tmp")
    staging.mkdir(parents=True)
    files = {
        "suite.toml": _SUITE_TOML.format(name=name),
        "cases.jsonl": "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in _cases()),
        "prompt.md": _PROMPT,
        "baseline.py": _BASELINE,
        "checks.py": _CHECKS,
    }
    for file, text in files.items():
        atomic_write_text(staging / file, text)
    staging.rename(folder)  # all of it or nothing
    suite, problems = validate_suite(folder)
    if problems or suite is None:  # a template that does not validate is a bug of ours: say so plainly
        for problem in problems:
            print(problem, file=sys.stderr)
        return EXIT_USAGE
    print(f"made {folder}/: suite {suite.name}, {len(suite.cases)} cases (one of each form)")
    print("  suite.toml   the suite: name, prompt, baseline, models")
    print("  cases.jsonl  the cases: edit and add yours (docs/case-format.md has every form and check)")
    print("  prompt.md    what --system claude sends as the system prompt")
    print("  baseline.py  an offline stand-in for the feature (predict(input) -> output)")
    print("  checks.py    user checks, registered with @evalkit.check")
    print(f"next: evalkit run {folder}   (then --system claude with ANTHROPIC_API_KEY set)")
    return EXIT_OK
