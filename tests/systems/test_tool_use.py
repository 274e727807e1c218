"""Tool-using features: tools.json and recorded tool results validated with where; the claude system's tool-use
loop against the local server through the real SDK (calls answered from the case, every turn cached, nothing paid
twice); a Python system given the case's tools; the checks on the transcript."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import evalkit as ek
from evalkit.errors import EvalkitError, SuiteValidationError
from evalkit.suite import load_suite, validate_suite
from evalkit.testing import Reply

ROOT = Path(__file__).resolve().parents[2]
TOOLS = [
    {"name": "lookup_order", "description": "Look up an order.",
     "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
    {"name": "issue_refund", "description": "Refund an order.",
     "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}}}},
]  # fmt: skip


def _case(i: int, order: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"t{i}",
        "input": f"refund order {order}",
        "tool_results": [
            {
                "tool": "lookup_order",
                "arguments": {"order_id": order},
                "result": {"status": "delivered", "total": 40},
            },
            {"tool": "issue_refund", "result": {"refund_id": f"R-{i}"}},
        ],
        "checks": [
            {"kind": "tool_sequence", "tools": ["lookup_order", "issue_refund"]},
            {
                "kind": "tool_called",
                "tool": "issue_refund",
                "arguments": {"order_id": order},
                "arguments_schema": {"properties": {"amount": {"maximum": 40}}},
            },
            {"kind": "contains_all", "field": "text", "facts": ["refunded"]},
        ],
        **extra,
    }


def _suite(root: Path, cases: list[dict[str, Any]], tools: Any = TOOLS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (root / "suite.toml").write_text(
        'name = "shop"\nmax_turns = 4\n[model]\nname = "claude-sonnet-4-6"\nmax_tokens = 64\n'
    )
    (root / "prompt.md").write_text("You are the shop's support agent.")
    (root / "tools.json").write_text(json.dumps(tools, indent=2))
    return root


def agent(amount: float) -> Callable[[dict[str, Any]], Reply]:
    """A scripted model: look the order up, refund `amount`, then say so."""

    def answer(body: dict[str, Any]) -> Reply:
        assert [t["name"] for t in body["tools"]] == ["lookup_order", "issue_refund"]
        order = body["messages"][0]["content"].split()[-1]
        done = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
                if b.get("type") == "tool_result"]  # fmt: skip
        if len(done) == 0:
            return Reply(
                text="Let me check.", tool_calls=[{"name": "lookup_order", "input": {"order_id": order}}]
            )
        if len(done) == 1:
            assert json.loads(done[0]["content"]) == {"status": "delivered", "total": 40}
            return Reply(
                tool_calls=[{"name": "issue_refund", "input": {"order_id": order, "amount": amount}}]
            )
        return Reply(text=f"I have refunded {amount} for {order}.")

    return answer


def test_the_loop_answers_calls_from_the_case_and_a_rerun_pays_nothing(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path / "shop", [_case(1, "A-1"), _case(2, "A-2")])
    server = make_anthropic_server(agent(40))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local")
    run = ek.run(suite, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r1", progress=False)
    assert run.pass_rate()["rate"][0] == 1.0
    assert len(server.requests_to("/v1/messages")) == 6  # three turns a case
    out = run.verdicts().join(run.checks().select("case_id", "output").unique("case_id"), on="case_id")
    recorded = json.loads(out.filter(out["case_id"] == "t1")["output"][0])
    assert [c["name"] for c in recorded["tool_calls"]] == ["lookup_order", "issue_refund"]
    assert recorded["tool_calls"][1]["result"] == {"refund_id": "R-1"} and "refunded 40" in recorded["text"]
    assert run.verdicts()["cost_usd"].min() > 0  # the turns' cost added up
    calls = run.tool_calls()  # one row per call, in the order made
    assert calls.filter(calls["case_id"] == "t2")["tool"].to_list() == ["lookup_order", "issue_refund"]
    assert json.loads(calls.filter(calls["case_id"] == "t2")["result"][1]) == {"refund_id": "R-2"}
    again = ek.run(suite, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r2", progress=False)
    assert len(server.requests_to("/v1/messages")) == 6 and "cache hits 2/2" in again.summary()


def test_a_wrong_transcript_fails_its_checks(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path / "shop", [_case(1, "A-1")])
    server = make_anthropic_server(agent(400))  # refunds ten times the order
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local")
    run = ek.run(suite, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r", progress=False)
    checks = run.checks()
    failed = checks.filter(checks["status"] == "fail")
    assert failed["check_kind"].to_list() == ["tool_called"] and "amount" in failed["detail"][0]


def test_a_call_the_case_cannot_answer_is_an_error_of_the_case(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _case(1, "A-1")
    case["tool_results"] = case["tool_results"][:1]  # nothing answers issue_refund
    suite = _suite(tmp_path / "shop", [case])
    server = make_anthropic_server(agent(40))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local")
    run = ek.run(suite, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r", progress=False)
    (error,) = run.checks().unique("case_id")["case_error"].to_list()
    assert "called issue_refund" in error and "tool_results" in error and run.errored_cases == 1
    with pytest.raises(EvalkitError, match="drop --batch"):
        ek.run(suite, "claude", batch=True, out=tmp_path / "b", progress=False)


def test_a_python_system_is_given_the_case_tools(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "shop", [_case(1, "A-1"), _case(2, "A-2")])

    def predict(input: str, tools: Any) -> str:
        order = input.split()[-1]
        found = tools("lookup_order", {"order_id": order})
        tools("issue_refund", {"order_id": order, "amount": found["total"]})
        return "refunded in full"

    run = ek.run(suite, predict, out=tmp_path / "r", progress=False)
    assert run.pass_rate()["rate"][0] == 1.0


def test_tools_and_recorded_results_are_validated_with_where(tmp_path: Path) -> None:
    bad_tools = [TOOLS[0], {"name": "issue refund", "input_schema": {"type": "string"}}]
    _, problems = validate_suite(_suite(tmp_path / "a", [_case(1, "A-1")], tools=bad_tools))
    fields = {(p.path.rsplit("/", 1)[-1], p.field) for p in problems}
    assert ("tools.json", "[1].name") in fields and ("tools.json", "[1].input_schema") in fields
    case = _case(1, "A-1")
    case["tool_results"].append({"tool": "cancel_order", "result": {}})
    case["checks"].append({"kind": "tool_not_called", "tool": "delete_account"})
    case["tool_results"][0].pop("result")
    with pytest.raises(SuiteValidationError) as raised:
        load_suite(_suite(tmp_path / "b", [case]))
    text = str(raised.value)
    assert "tool_results[0].result: required field is missing" in text  # a recorded result is required
    case["tool_results"][0]["result"] = {}
    with pytest.raises(SuiteValidationError) as raised:
        load_suite(_suite(tmp_path / "c", [case]))
    shown = [(p.line, p.field, p.message) for p in raised.value.problems]
    assert (1, "tool_results[2].tool", "no tool 'cancel_order'") in shown
    assert (1, "checks[3].tool", "no tool 'delete_account'") in shown


def test_the_shipped_order_support_suite_grades_its_transcripts() -> None:
    suite = load_suite(ROOT / "goldens" / "order-support")
    assert len(suite.cases) >= 60 and suite.tools is not None and len(suite.slice_counts()) >= 6
    assert all(c.tool_results for c in suite.cases)


def test_the_shipped_suite_runs_its_loop_against_the_local_server_and_pays_nothing_twice(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.testing.server import RulesResponder, load_rules_file

    suite = ROOT / "goldens" / "order-support"
    rules = load_rules_file(suite / "serve_rules.toml")  # the suite's simulated agent (not Claude)
    server = make_anthropic_server(RulesResponder(rules.rules))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local")
    # stopped part-way by a spending cap, then resumed: every turn of every case is sent once
    with pytest.raises(EvalkitError):
        ek.run(
            suite, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r", max_cost=0.05, progress=False
        )
    stopped_at = len(server.requests_to("/v1/messages"))
    run = ek.resume(tmp_path / "r", max_cost=10.0, progress=False)
    bodies = [json.dumps(r.body, sort_keys=True) for r in server.requests_to("/v1/messages")]
    assert 0 < stopped_at < len(bodies) and len(bodies) == len(set(bodies))  # no request twice
    assert run.status == "complete" and run.errored_cases == 0 and run.pass_rate()["rate"][0] > 0.8
    calls = run.checks().filter(run.checks()["check_kind"] == "tool_sequence")
    assert calls.height > 10
    again = ek.run(suite, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r2", progress=False)
    assert len(server.requests_to("/v1/messages")) == len(bodies) and "cache hits 60/60" in again.summary()
    baseline = ek.run(
        suite, "baseline", out=tmp_path / "b", progress=False
    )  # the planted faults fail their checks
    rates = baseline.pass_rate(by="slice")
    assert rates.filter(rates["slice"] == "injected-instructions")["rate"][0] < 0.5


def test_scripted_user_turns_are_sent_after_each_reply_and_the_conversation_is_graded(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        return Reply(text=f"reply {len(users)} to: {users[-1]}")

    case = {
        "id": "c1",
        "input": "Where is A-1?",
        "user_turns": ["It was meant for my sister.", "Thanks, bye."],
        "checks": [{"kind": "contains_all", "field": "text", "facts": ["reply 3 to: Thanks, bye."]},
                   {"kind": "contains_all", "field": "replies.1", "facts": ["my sister"]}],
    }  # fmt: skip
    root = tmp_path / "chat"
    root.mkdir()
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    (root / "suite.toml").write_text('name = "chat"\n[model]\nname = "claude-sonnet-4-6"\nmax_tokens = 64\n')
    (root / "prompt.md").write_text("Be brief.")
    server = make_anthropic_server(answer)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local")
    run = ek.run(root, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r", progress=False)
    assert run.pass_rate()["rate"][0] == 1.0
    sent = server.requests_to("/v1/messages")
    assert [len(r.body["messages"]) for r in sent] == [1, 3, 5]  # each reply, then the next scripted turn
    assert sent[2].body["messages"][3] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "reply 2 to: It was meant for my sister."}],
    }
    ek.run(root, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r2", progress=False)
    assert (
        len(server.requests_to("/v1/messages")) == 3
    )  # the rerun replays the whole conversation from the cache
    bad = {**case, "id": "c2", "user_turns": ["fine", ""]}
    (root / "cases.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(SuiteValidationError, match=r"user_turns\[1\]"):
        load_suite(root)


def test_tools_py_answers_what_the_case_does_not_record_within_the_time_limit(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [_case(1, "A-1"), _case(2, "SLOW")]
    for case in cases:
        case["tool_results"] = [r for r in case["tool_results"] if r["tool"] != "lookup_order"]
    root = _suite(tmp_path / "shop", cases)
    (root / "suite.toml").write_text(
        'name = "shop"\ncheck_timeout_s = 1\n[model]\nname = "claude-sonnet-4-6"\nmax_tokens = 64\n'
    )
    (root / "tools.py").write_text(
        "import time\n\n"
        "def lookup_order(arguments, case):\n"
        "    if arguments['order_id'] == 'SLOW':\n"
        "        time.sleep(30)\n"
        "    return {'status': 'delivered', 'total': 40}\n"
    )
    server = make_anthropic_server(agent(40))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local")
    run = ek.run(root, "claude", cache_dir=tmp_path / "cache", out=tmp_path / "r", progress=False)
    verdicts = {r["case_id"]: r["status"] for r in run.verdicts().iter_rows(named=True)}
    assert verdicts == {"t1": "pass", "t2": "error"}
    (error,) = run.checks().filter(run.checks()["case_id"] == "t2").unique("case_id")["case_error"].to_list()
    assert "tools.py lookup_order" in error and "timed out after 1" in error
    (root / "tools.py").write_text(
        "def lookup_order(arguments, case):\n    raise RuntimeError('backend down')\n"
    )
    broken = ek.run(root, predict_with_tools, out=tmp_path / "p", progress=False)
    assert broken.errored_cases == 2 and "backend down" in broken.checks()["case_error"][0]


def predict_with_tools(input: str, tools: Any) -> str:
    order = input.split()[-1]
    tools("lookup_order", {"order_id": order})
    return "done"


def test_the_report_shows_each_transcript_as_its_reply_and_calls(tmp_path: Path) -> None:
    run = ek.run(ROOT / "goldens" / "order-support", "baseline", out=tmp_path / "r", progress=False)
    page = run.report(baseline=None).html
    assert "reply: Your refund is on its way" in page
    assert "1. lookup_order(order_id=&quot;A-1003&quot;)" in page and "-&gt; {&quot;refund_id&quot;" in page


def test_the_estimate_says_a_loop_is_counted_as_its_first_turn(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "shop", [_case(1, "A-1")])
    text = str(ek.estimate(suite, "claude"))
    assert "1 case(s) run a tool-use or multi-turn loop: counted as their first turn only" in text
    baseline = ek.estimate(
        suite, predict_with_tools
    )  # a Python system taking tools is run as the run runs it
    assert "no API calls" in str(baseline)
