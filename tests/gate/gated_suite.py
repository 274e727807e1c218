"""A 200-case suite on disk for the fail-closed gate tests: a Python system answers, and 90 cases have a judge
check graded through the local server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit._client import Client
from evalkit._runner import Runner, RunOptions
from evalkit._systems import PythonSystem
from evalkit.graders import Judge
from evalkit.suite import load_suite

N = 200
JUDGED = range(110, 200)  # 90 cases with a judge check after a cheap one


def judge_responder(body: dict[str, Any]) -> Any:
    """Judge calls: a case passes when the output says 'yes'."""
    user = body["messages"][-1]["content"]
    ok = "<output>\nyes" in user or '"yes"' in user or "\nyes\n" in user
    return {
        "criteria": [{"criterion": "Says yes", "met": ok, "evidence": "the output"}],
        "score": 5 if ok else 1,
        "passed": ok,
        "reasoning": "says yes" if ok else "does not say yes",
    }


def case(i: int, expected: str = "yes") -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"c{i:03d}",
        "input": {"n": i},
        "slice": "judged" if i in JUDGED else "exact",
    }
    if i in JUDGED:
        row["checks"] = [
            {"kind": "contains_all", "facts": ["y"]},
            {"kind": "judge", "name": "quality", "rubric": ["Says yes"]},
        ]
    else:
        row |= {"expected": expected, "grader": "exact"}
    return row


def write_suite(root: Path, rows: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "suite.toml").write_text('name = "gated"\n', encoding="utf-8")
    return root


def system(answer: Callable[[int], str]) -> PythonSystem:
    def predict(case_input: dict[str, Any]) -> str:
        return answer(case_input["n"])

    return PythonSystem("pipeline", predict, "test")


def run(suite_root: Path, tmp: Path, answer: Callable[[int], str], *, server: Any = None, name: str) -> Path:
    suite = load_suite(suite_root)
    opts = RunOptions(
        out_root=tmp / "runs",
        run_dir=tmp / "runs" / name,
        cache_dir=tmp / "cache",
        progress=False,
        judge="on" if server else "off",
    )
    if server is None:
        return Runner(suite, system(answer), opts).run().run_dir
    client = Client(base_url=server.base_url, api_key="test-key", max_retries=1, timeout=5)
    judge = Judge(client=client, settings=suite.config.judge, cache=None)
    runner = Runner(suite, system(answer), opts, client=client, judge=judge)
    judge.cache = runner.cache
    return runner.run().run_dir
